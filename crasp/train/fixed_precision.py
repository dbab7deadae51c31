"""``crasp train --precision P[.S]``: transformers of the model format's fixed-precision class.

The module computes, in its forward pass, exactly the arithmetic of ``docs/model-format.md``
(``crasp.compiler.execute`` in exact mode), so a trained run *is* a format model
(``format_model``): the same values bit for bit, and every decision equal, at every position of
every input. What differs from the trainer's default architecture (``crasp.train.model``):

* every number is a p-bit grid value with s fractional bits, m * 2^-s: the weights (used
  through R, so the format stores R(weight)), the embedding, every attention average, every
  residual sum and every feed-forward layer's output. R rounds down and saturates;
* no LayerNorm, ReLU feed-forward, no positional encoding (NoPE), BOS first, no dropout;
* attention is the format's: weight R(exp(q . k)) (no 1/sqrt(d) scaling, no softmax maximum
  subtracted), summand R(weight * v), the two sums over j <= i exact, average R(N / D), or
  R(mean v) when every weight rounds to 0 (``crasp.train.exact_attention``); projections have
  no biases;
* the output score out . h + b is not rounded (its sign is the decision).

Gradients: R is the identity in the backward pass (the straight-through estimator, Bengio,
Leonard & Courville 2013), applied by ``_Straight``, whose forward pass returns the exactly
rounded value (``x + (R(x) - x).detach()`` would not: the float sum can miss R(x) by an ulp).
exp's argument is capped at ``cap`` = (p - 1 - s) ln 2 + 1 before exp: any score above the cap
saturates the weight either way, so the value is unchanged while the gradient stays finite.

Precondition for bit-for-bit agreement (``exactness_bits``): every product and sum of the
linear maps is exact in float64 (then no summation order can differ), which holds when
dh d^2 2^(4p - 4) < 2^53 (the largest score q . k in units of 2^-4s); ``TrainConfig.validate``
refuses wider settings. The only remaining float operation is exp, identical in both.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from crasp.errors import CraspError
from crasp.train.exact_attention import fixed_attention

MAX_EXACT_BITS = 53


def parse_precision(text: str) -> tuple[int, int]:
    """``"8.4"`` -> (8, 4); ``"8"`` -> (8, 0). Raises ``CraspError`` unless 2 <= p <= 53 and
    0 <= s < p."""
    parts = str(text).strip().split(".")
    if len(parts) not in (1, 2) or not all(part.isdigit() for part in parts):
        raise CraspError(f"precision must be P or P.S (total and fractional bits, e.g. 8.4), "
                         f"got {text!r}")
    total, frac = int(parts[0]), int(parts[1]) if len(parts) == 2 else 0
    if not 2 <= total <= MAX_EXACT_BITS or not 0 <= frac < total:
        raise CraspError(f"precision {text}: need 2 <= P <= {MAX_EXACT_BITS} total bits and "
                         f"0 <= S < P fractional bits")
    return total, frac


def exactness_bits(total_bits: int, d_model: int, d_head: int) -> int:
    """Bits of the largest score q . k in grid units (see the module docstring)."""
    return (4 * total_bits - 4 + 2 * math.ceil(math.log2(max(d_model, 1)))
            + math.ceil(math.log2(max(d_head, 1))))


class Grid:
    """The p-bit, s-fractional-bit number system of the format: ``round`` is R (forward value
    exact, gradient straight through); ``units``/``value`` convert to and from grid units."""

    def __init__(self, total_bits: int, frac_bits: int):
        self.total_bits, self.frac_bits = total_bits, frac_bits
        self.scale = 2.0 ** frac_bits
        self.low, self.high = -(2.0 ** (total_bits - 1)), 2.0 ** (total_bits - 1) - 1
        self.cap = (total_bits - 1 - frac_bits) * math.log(2) + 1

    def units(self, x: torch.Tensor) -> torch.Tensor:
        """clamp(floor(x 2^s)) as float64 integers (no gradient)."""
        return (x.detach() * self.scale).floor_().clamp_(self.low, self.high)

    def round(self, x: torch.Tensor) -> torch.Tensor:
        return _Straight.apply(x, self.units(x) / self.scale)

    def ratio(self, numerator: torch.Tensor, denominator: torch.Tensor) -> torch.Tensor:
        """R(N / D) for exact sums in grid units, D > 0: floor(N 2^s / D), as the executor's
        integer floor division (exact: the quotient of two exact integers below 2^53 is
        correctly rounded, so its floor is the integer floor)."""
        exact = torch.clamp(torch.floor(numerator.detach() * self.scale / denominator.detach()),
                            self.low, self.high)
        return _Straight.apply(numerator / denominator, exact / self.scale)

    @staticmethod
    def straight(x: torch.Tensor, exact: torch.Tensor) -> torch.Tensor:
        """``exact`` forward, the gradient of ``x`` backward."""
        return _Straight.apply(x, exact)


class _Straight(torch.autograd.Function):
    """Forward: ``exact``; backward: the gradient goes to ``x`` unchanged."""

    @staticmethod
    def forward(ctx, x, exact):
        return exact

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class _Attention(nn.Module):
    """One layer's heads: ``q``, ``k``, ``v`` [H, d] (head a: rows a dh .. (a+1) dh - 1) and
    ``o`` [d, H], the format's tensors ``layers.{l}.attn.{q,k,v,o}``, without biases."""

    def __init__(self, d_model: int, n_heads: int):
        super().__init__()
        bound = 1 / math.sqrt(d_model)
        self.n_heads, self.d_head = n_heads, d_model // n_heads
        for name in ("q", "k", "v", "o"):
            self.register_parameter(name, nn.Parameter(
                torch.empty(d_model, d_model, dtype=torch.float64).uniform_(-bound, bound)))


class _Layer(nn.Module):
    def __init__(self, d_model: int, n_heads: int, widths: list[int]):
        super().__init__()
        self.attn = _Attention(d_model, n_heads)
        sizes = [d_model, *widths, d_model]
        self.ffn = nn.ModuleList(nn.Linear(a, b, dtype=torch.float64)
                                 for a, b in zip(sizes, sizes[1:]))


class _Out(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        bound = 1 / math.sqrt(d_model)
        self.weight = nn.Parameter(torch.empty(d_model, dtype=torch.float64).uniform_(-bound,
                                                                                        bound))
        self.bias = nn.Parameter(torch.zeros((), dtype=torch.float64))


class PrecisionTransformer(nn.Module):
    """``forward(tokens (B, T) long) -> scores (B, T)`` in float64; position 0 holds BOS (id V),
    padding (id V + 1) reads the format's "other token" row and is never seen by a real
    position. Parameter names are the format's tensor names (``model_config``'s ``EMBED``,
    ``attention``, ``ffn``, ``OUT_WEIGHT``, ...); the format's tensors are their R."""

    def __init__(self, vocab_size: int, d_model: int, n_heads: int,
                 ffn_widths: list[list[int]], total_bits: int, frac_bits: int):
        super().__init__()
        self.grid = Grid(total_bits, frac_bits)
        self.ffn_widths = [list(widths) for widths in ffn_widths]
        self.embed = nn.Parameter(torch.randn(vocab_size + 2, d_model, dtype=torch.float64))
        self.layers = nn.ModuleList(_Layer(d_model, n_heads, widths) for widths in ffn_widths)
        self.out = _Out(d_model)

    def rounded(self, tensor: torch.Tensor) -> torch.Tensor:
        return self.grid.round(tensor)

    def _head(self, h: torch.Tensor, attn: _Attention, head: int) -> torch.Tensor:
        rows = slice(head * attn.d_head, (head + 1) * attn.d_head)
        q, k, v = (h @ self.rounded(weight[rows]).T for weight in (attn.q, attn.k, attn.v))
        return fixed_attention(q, k, v, self.grid)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        R = self.grid.round
        h = R(self.rounded(self.embed)[tokens])
        for layer in self.layers:
            attn = layer.attn
            heads = torch.cat([self._head(h, attn, a) for a in range(attn.n_heads)], dim=-1)
            h = R(h + heads @ self.rounded(attn.o).T)
            x = h
            for m, linear in enumerate(layer.ffn):
                x = R(x @ self.rounded(linear.weight).T + self.rounded(linear.bias))
                if m < len(layer.ffn) - 1:
                    x = torch.relu(x)
            h = R(h + x)
        return h @ self.rounded(self.out.weight) + self.rounded(self.out.bias)

    def format_tensors(self) -> dict[str, torch.Tensor]:
        """The format's tensors: R of every parameter, under the same names."""
        with torch.no_grad():
            return {name: self.rounded(value).detach().cpu().clone()
                    for name, value in self.state_dict().items()}


def format_model(module: PrecisionTransformer, vocab, config):
    """The trained module as a ``CompiledModel`` of the format (exact: its tensors are R of the
    parameters, which is what ``forward`` computes with). ``config`` is the run's
    ``TrainConfig``; the embedding row after BOS, the trainer's padding (never trained), is the
    format's row for tokens outside the vocabulary."""
    from crasp.compiler.model_format import CompiledModel
    from crasp.compiler.model_config import FORMAT, VERSION

    d_model, n_layers = config.d_model, len(module.layers)
    tensors = {name: tensor.numpy() for name, tensor in module.format_tensors().items()}
    return CompiledModel({
        "format": FORMAT, "version": VERSION, "vocab": list(vocab), "bos_id": len(vocab),
        "other_id": len(vocab) + 1, "d_model": d_model, "n_layers": n_layers,
        "n_heads": config.n_heads, "d_head": d_model // config.n_heads,
        "ffn_widths": module.ffn_widths,
        "precision": {"total_bits": module.grid.total_bits,
                      "frac_bits": module.grid.frac_bits},
        "depth": n_layers, "residual_labels": [f"h{i}" for i in range(d_model)],
        "program_sha256": "", "trained": {"language": config.language, "seed": config.seed,
                                          "precision": config.precision}}, tensors)


def write_format_model(module, vocab, config, run_dir) -> None:
    """A finished ``--precision`` run's best weights as a format model, ``RUN/model``
    (``crasp.train.run.FORMAT_MODEL_DIR``); nothing for other runs."""
    from crasp.train.run import FORMAT_MODEL_DIR

    if config.precision is not None:
        format_model(module, vocab, config).save(Path(run_dir) / FORMAT_MODEL_DIR, force=True)


def restore_format_model(run_dir, results) -> None:
    """Write again the format model of a finished ``--precision`` run that lacks one of its
    files (removed by hand, or left out of a copy): it is derived from the run's best weights,
    as ``write_format_model`` derived it when the run finished, so it is the same model.
    Nothing for other runs; a ``RUN/model`` holding anything but a model crasp wrote (a file
    of its own, or the weights without the config that marks them crasp's) stays, and
    ``save`` refuses it naming what it holds. ``results`` is the run's ``RunResults``."""
    from crasp.train import run as files
    from crasp.util.outputs import COMPILED_MODEL

    run_dir = Path(run_dir)
    place = run_dir / files.FORMAT_MODEL_DIR
    if all((place / name).is_file() for name in COMPILED_MODEL.written) or \
            (results.config or {}).get("precision") is None:  # a search never varies it
        return
    config = files.selected_config(results.config, results.best_trial,
                                   run_dir / files.RESULTS_FILE)
    vocab = (results.data or {}).get("vocab")
    if not vocab:
        raise CraspError(f"{run_dir / files.RESULTS_FILE}: no vocabulary recorded, so the "
                         f"format model cannot be written again")
    module = files.selected_model(run_dir, config, len(vocab))
    write_format_model(module, vocab, config, run_dir)


def remove_format_model(run_dir) -> None:
    """Remove the format model an earlier ``--precision`` run left in ``run_dir`` (only a
    compiled model crasp wrote there; anything else stays)."""
    import shutil

    from crasp.train.run import FORMAT_MODEL_DIR
    from crasp.util.outputs import COMPILED_MODEL, holds

    place = Path(run_dir) / FORMAT_MODEL_DIR
    if holds(place, COMPILED_MODEL):
        shutil.rmtree(place)
