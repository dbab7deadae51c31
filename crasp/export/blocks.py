"""Pass: Checkpoint -> BlockPlan. The trainer's model as standard pre-norm blocks.

Interpretability frameworks build every block from one attention sublayer and one MLP with
ONE hidden layer, of one width in every block (TransformerLens' ``d_mlp``, Hugging Face's
``intermediate_size``/``n_inner``). crasp's checkpoints (``crasp.train.model``) may have several
hidden layers per feed-forward sublayer (a float realization has one per stage of its
threshold gadgets and gates, ``crasp.realize.realization``) and per-layer widths. This pass
rewrites a checkpoint into such blocks, computing the same function:

**Widths.** Every MLP gets ``d_mlp`` = the widest hidden layer; the extra units have zero
weights and biases in and out: ReLU(0) = GELU(0) = 0, and a zero column adds exact zeros.

**Several hidden layers.** A layer with hidden widths [w_1, ..., w_M] and linear maps
W_0 (up), W_1 .. W_{M-1}, W_M (down) becomes M consecutive blocks. Two *scratch banks* of
residual coordinates (each as wide as the widest hidden layer, zero in every embedding row)
carry the hidden activations between them:

* block 1 holds the layer's attention; its MLP computes s_1 = ReLU(W_0 h + b_0) and, if M > 1,
  writes it to bank 1 (identity output weights, zero bias): the bank held 0, and 0 + s = s
  exactly;
* block j = 2 .. M has an all-zero attention (it adds exact zeros) and an MLP with two groups of
  units: ReLU(W_{j-1} s_{j-1} + b_{j-1}), written to bank j mod 2 (or, for j = M, through W_M
  and b_M to the model's own coordinates), and ReLU(s_{j-1}) = s_{j-1} (s is a ReLU output,
  hence >= 0), written back to bank (j - 1) mod 2 with weight -1: s + (-s) = 0 exactly, so the
  bank is clean for the next layer.

Every block therefore adds exactly what crasp's sublayer adds; the only difference is that the
dot products hold extra zero terms. For a float realization every feed-forward value is an
exact small integer or a threshold read with weight +-1 (``crasp.realize``), so the sums are
exact in any order and the block model equals the checkpoint bit for bit; for a trained run the
order of a matrix product's summation may differ in the last bit. The scratch banks would enter
a LayerNorm's statistics, so a pre-LN checkpoint must have one hidden layer per sublayer.

Preconditions (else ``CraspError``, exit status 2): a checkpoint of the trainer's class
(a float realization or trained run of ``crasp.models``; an exact compiled model rounds after
every sublayer, which no
framework layer does); normalization "none" or "pre"; positions "nope", "learned" or
"sinusoidal" (absolute, so they become a position table); softmax or dp-free attention with
queries and keys as wide as the values (no ``--qk-rank``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from crasp.errors import CraspError

ABSOLUTE_POSENCS = ("nope", "learned", "sinusoidal")


@dataclass
class Block:
    """One framework block: weights in torch layout ([out, in]), in the checkpoint's dtype.
    ``attention`` maps q, k, v, o to (weight, bias), or is None for an all-zero attention;
    ``norm1``/``norm2`` are LayerNorm (weight, bias) for pre-LN models, else None."""

    layer: int                 # the checkpoint's layer (0-based)
    stage: int                 # 1 .. M: which hidden layer of that layer's feed-forward
    attention: dict[str, tuple[torch.Tensor, torch.Tensor]] | None
    fc_in: tuple[torch.Tensor, torch.Tensor]
    fc_out: tuple[torch.Tensor, torch.Tensor]
    norm1: tuple[torch.Tensor, torch.Tensor] | None = None
    norm2: tuple[torch.Tensor, torch.Tensor] | None = None


@dataclass
class BlockPlan:
    """A checkpoint as uniform pre-norm blocks (module docstring). Token ids are the
    checkpoint's: ``vocab[t]`` is t, BOS is ``len(vocab)``, padding ``len(vocab) + 1``; the
    row ``len(vocab) + 2`` (a token outside the vocabulary) is NaN."""

    vocab: list[str]
    kind: str                  # "compiled-float" or "trained"
    dtype: torch.dtype
    d_model: int
    n_heads: int
    d_head: int
    d_mlp: int
    activation: str            # "relu" or "gelu" (exact erf GELU)
    norm: str                  # "none" or "pre"
    eps: float
    n_ctx: int
    embed: torch.Tensor        # [len(vocab) + 3, d_model]
    positions: torch.Tensor | None   # [n_ctx, d_model], None for NoPE
    blocks: list[Block]
    final_norm: tuple[torch.Tensor, torch.Tensor] | None
    head_weight: torch.Tensor  # [d_model]
    head_bias: torch.Tensor    # []
    labels: list[str]          # one per residual coordinate
    source: dict = field(default_factory=dict)   # the checkpoint's config

    @property
    def bos_id(self) -> int:
        return len(self.vocab)

    @property
    def pad_id(self) -> int:
        return len(self.vocab) + 1


def checkpoint_of(model, target: str):
    """The trainer's checkpoint a float realization or trained run wraps (``crasp.models``
    types, or the checkpoint itself); an exact compiled model is refused: it floors after every
    sublayer, which no framework block does."""
    model = getattr(model, "executable", model)
    if not hasattr(model, "module"):
        raise CraspError(
            f"an exact compiled model rounds down after every sublayer, which {target} cannot "
            f"express; export its float realization instead (crasp compile PROG --target float "
            f"--dtype float64 -o DIR, then crasp export DIR)")
    return model


def plan_blocks(model, target: str, n_ctx: int | None) -> BlockPlan:
    """The ``BlockPlan`` of a float realization or trained run (module docstring), refusing
    what ``target`` (a name for messages) cannot express; ``n_ctx`` positions (default
    ``context_length``)."""
    checkpoint = checkpoint_of(model, target)
    n_ctx = context_length(checkpoint, n_ctx)
    config = checkpoint.config["train_config"]   # TrainConfig.to_dict()
    module = checkpoint.module
    why = _unsupported(config, module)
    if why:
        raise CraspError(f"{target} cannot express this model: {why}")
    dtype = next(module.parameters()).dtype
    d = config["d_model"]
    widths = [list(w) for w in module.ffn_widths]
    deepest = max(len(w) for w in widths)
    widest = max(x for w in widths for x in w)
    if config["norm"] == "pre" and deepest > 1:
        raise CraspError(f"{target} cannot express this model: a pre-LN feed-forward sublayer "
                         f"with {deepest} hidden layers (its hidden activations would have to "
                         f"cross the LayerNorm of the next block)")
    banks = 2 if deepest > 2 else deepest - 1   # scratch banks (module docstring)
    total = d + banks * widest
    labels = list(checkpoint.config.get("residual_labels") or [f"h[{i}]" for i in range(d)])
    labels += [f"hidden bank {b + 1}[{i}] (a feed-forward hidden layer between blocks)"
               for b in range(banks) for i in range(widest)]
    bank = [slice(d + b * widest, d + (b + 1) * widest) for b in range(banks)]

    def pad(matrix: torch.Tensor, rows: int, columns: int) -> torch.Tensor:
        padded = torch.zeros(rows, columns, dtype=dtype)
        padded[:matrix.shape[0], :matrix.shape[1]] = matrix.detach()
        return padded

    def vector(values: torch.Tensor | None, size: int) -> torch.Tensor:
        padded = torch.zeros(size, dtype=dtype)
        if values is not None:
            padded[:values.shape[0]] = values.detach()
        return padded

    rows = module.embed.weight.shape[0]
    embed = pad(module.embed.weight, rows + 1, total)
    embed[rows] = float("nan")   # <unk> (crasp.export.tokenizer): no answer, never a wrong one
    positions = None
    if module.pos is not None:   # "learned" or "sinusoidal": the model's own table
        try:
            table = module.pos(n_ctx, "cpu")
        except ValueError:
            raise CraspError(f"the learned position table is shorter than --n-ctx "
                             f"{n_ctx}") from None
        positions = pad(table.to(dtype), n_ctx, total)
    heads, head_dim = config["n_heads"], d // config["n_heads"]
    inner = heads * head_dim
    blocks = []
    for layer, (block, layer_widths) in enumerate(zip(module.layers, widths)):
        attn = block.attn
        zero = torch.zeros(inner, d, dtype=dtype)
        attention = {}
        for part in ("q", "k", "v"):
            linear = getattr(attn, part)
            weight = linear.weight if linear is not None else zero
            attention[part] = (pad(weight, inner, total),
                               vector(linear.bias if linear is not None else None, inner))
        attention["o"] = (pad(attn.o.weight, total, inner), vector(attn.o.bias, total))
        norms = ((_norm(block.norm1, total), _norm(block.norm2, total))
                 if config["norm"] == "pre" else (None, None))
        ff = block.ff
        maps = [ff.up, *ff.hidden, ff.down]
        stages = len(layer_widths)
        for stage in range(1, stages + 1):
            reads = slice(0, d) if stage == 1 else bank[(stage - 2) % 2]
            inside = maps[stage - 1]
            fc_in_w = torch.zeros(widest * (1 if stage == 1 else 2), total, dtype=dtype)
            fc_in_b = torch.zeros(fc_in_w.shape[0], dtype=dtype)
            rows, columns = inside.weight.shape
            fc_in_w[:rows, reads.start:reads.start + columns] = inside.weight.detach()
            fc_in_b[:inside.bias.shape[0]] = inside.bias.detach()
            fc_out_w = torch.zeros(total, fc_in_w.shape[0], dtype=dtype)
            fc_out_b = torch.zeros(total, dtype=dtype)
            if stage == stages:
                fc_out_w[:d, :ff.down.weight.shape[1]] = ff.down.weight.detach()
                fc_out_b[:d] = ff.down.bias.detach()
            else:
                writes = bank[(stage - 1) % 2]
                width = inside.weight.shape[0]
                fc_out_w[writes.start:writes.start + width, :width] = torch.eye(width,
                                                                                dtype=dtype)
            if stage > 1:   # ReLU(s) = s, written back with -1: the bank read is cleared
                previous = maps[stage - 2].weight.shape[0]
                start = reads.start
                for unit in range(previous):
                    fc_in_w[widest + unit, start + unit] = 1
                    fc_out_w[start + unit, widest + unit] = -1
            blocks.append(Block(layer, stage, attention if stage == 1 else None,
                                (fc_in_w, fc_in_b), (fc_out_w, fc_out_b),
                                *(norms if stage == 1 else (None, None))))
    d_mlp = max(block.fc_in[0].shape[0] for block in blocks)
    for block in blocks:   # one width for all: zero units added
        block.fc_in = (pad(block.fc_in[0], d_mlp, total), vector(block.fc_in[1], d_mlp))
        block.fc_out = (pad(block.fc_out[0], total, d_mlp), block.fc_out[1])
    head_weight = vector(module.head.weight[0], total)
    head_bias = module.head.bias.detach()[0].clone()
    final_norm = _norm(module.final_norm, total) if config["norm"] == "pre" else None
    return BlockPlan(
        vocab=list(checkpoint.config["vocab"]), kind=checkpoint.config["kind"], dtype=dtype,
        d_model=total, n_heads=heads, d_head=head_dim, d_mlp=d_mlp,
        activation=config["activation"], norm=config["norm"], eps=1e-5, n_ctx=n_ctx, embed=embed,
        positions=positions, blocks=blocks, final_norm=final_norm, head_weight=head_weight,
        head_bias=head_bias, labels=labels, source=dict(checkpoint.config))


def _norm(layer_norm, total: int):
    """A pre-LN model's LayerNorm as (weight, bias); ``total`` must equal its width (pre-LN
    plans add no coordinates)."""
    assert layer_norm.weight.shape[0] == total
    return layer_norm.weight.detach().clone(), layer_norm.bias.detach().clone()


def _unsupported(config: dict, module) -> str | None:
    """Why a framework's standard blocks cannot hold this configuration (a
    ``TrainConfig.to_dict()``), or None."""
    if config["norm"] == "post":
        return ("post-LN (LayerNorm after each residual addition); the frameworks' blocks are "
                "pre-LN or LayerNorm-free")
    if config["posenc"] not in ABSOLUTE_POSENCS:
        return (f"positional encoding {config['posenc']!r} (only "
                f"{', '.join(ABSOLUTE_POSENCS)} map onto a position table)")
    if config.get("attention") == "hardmax":
        return "hardmax attention (the frameworks' heads are softmax)"
    head_dim = config["d_model"] // config["n_heads"]
    if config.get("qk_rank") and config["qk_rank"] != head_dim:
        return f"--qk-rank {config['qk_rank']} (queries and keys narrower than the values)"
    if any(block.norm1.__class__.__name__ not in ("Identity", "LayerNorm")
           for block in module.layers):
        return "a normalization other than LayerNorm"
    return None


def context_length(checkpoint, requested: int | None, cap: int = 1024) -> int:
    """Positions the export holds: ``requested``, else the certified length + 1 (float
    realizations) or the longest trained/tested length + 1 (trained runs), at most ``cap``
    (a position table and a causal mask of n_ctx^2 per layer)."""
    if requested is not None:
        if requested < 1:
            raise CraspError(f"--n-ctx must be at least 1, got {requested}")
        return requested
    if checkpoint.config.get("certified_length") is not None:
        wanted = checkpoint.config["certified_length"] + 1
    else:   # the learned table's rows (the longest trained or tested length + 1), else the cap
        table = getattr(checkpoint.module.pos, "table", None)
        wanted = table.weight.shape[0] if table is not None else cap
    return min(wanted, cap)


def description(plan: BlockPlan, target_format: str) -> dict:
    """``crasp.json``: what the export is, its residual coordinates, and which block holds
    which crasp layer (the hidden layers of a layer's feed-forward are consecutive blocks)."""
    source = plan.source
    return {
        "format": target_format, "kind": plan.kind, "dtype": str(plan.dtype).split(".")[-1],
        "vocab": plan.vocab, "bos_id": plan.bos_id, "pad_id": plan.pad_id,
        "residual_labels": plan.labels,
        "blocks": [{"block": index, "layer": block.layer, "stage": block.stage,
                    "attention": block.attention is not None}
                   for index, block in enumerate(plan.blocks)],
        "certified_length": source.get("certified_length"),
        "program_sha256": source.get("program_sha256"),
        "output": "logit 0 at every position is the score; the decision is score > 0",
    }
