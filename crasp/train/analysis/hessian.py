"""The Hessian of the loss over each layer's W_Q, W_K, W_V, W_O and feed-forward weights.

On one fixed batch (the first ``n_strings`` strings of the shortest test bin, model in eval
mode, so no dropout) the loss is the trainer's ``masked_loss``. The blocks are the weight
matrices ``layers[l].attn.{q,k,v,o}.weight`` and ``layers[l].ff.{up,down}.weight`` (biases,
embeddings, norms and the output head are held fixed). With θ their concatenation (P numbers),
H = ∂²loss/∂θ² is computed exactly by reverse-over-reverse differentiation, one
Hessian-vector product per column, in float64. Its size is P², so models with P above
``max_params`` are refused. Reported: the P x P block structure as a matrix of Frobenius norms
``||H[i, j]||_F`` and each diagonal block's eigenvalues (the block's own curvature spectrum).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch
from torch.func import functional_call
from torch.nn.attention import SDPBackend, sdpa_kernel

from crasp.errors import CraspError
from crasp.train.batching import Batch
from crasp.train.metrics import masked_loss

DEFAULT_MAX_PARAMS = 2048
BLOCKS = ("attn.q", "attn.k", "attn.v", "attn.o", "ff.up", "ff.down")


@dataclass
class HessianResult:
    names: list[str]
    sizes: list[int]
    matrix: torch.Tensor            # (P, P) float64

    def block(self, i: int, j: int) -> torch.Tensor:
        starts = [0]
        for size in self.sizes:
            starts.append(starts[-1] + size)
        return self.matrix[starts[i]:starts[i + 1], starts[j]:starts[j + 1]]

    def block_norms(self) -> torch.Tensor:
        n = len(self.names)
        return torch.tensor([[float(self.block(i, j).norm()) for j in range(n)] for i in range(n)])

    def spectra(self) -> dict[str, list[float]]:
        return {name: torch.linalg.eigvalsh(self.block(i, i)).tolist()
                for i, name in enumerate(self.names)}


def block_names(model) -> list[str]:
    """The blocks the model has (``dp-free`` attention has no ``attn.q``, ``attn.k``)."""
    present = dict(model.named_parameters())
    return [name for layer in range(len(model.layers)) for block in BLOCKS
            if (name := f"layers.{layer}.{block}.weight") in present]


def check_size(model, max_params: int) -> None:
    params = dict(model.named_parameters())
    total = sum(params[name].numel() for name in block_names(model))
    if total > max_params:
        raise CraspError(f"the Hessian blocks hold {total} parameters, above the limit "
                         f"{max_params} (a {total} x {total} matrix); use a smaller model or "
                         f"raise --max-params")


def loss_hessian(model, batch: Batch, max_params: int = DEFAULT_MAX_PARAMS) -> HessianResult:
    check_size(model, max_params)
    names = block_names(model)
    model = copy.deepcopy(model).double().eval()
    params = dict(model.named_parameters())
    sizes = [params[name].numel() for name in names]
    fixed = {name: value.detach() for name, value in params.items() if name not in names}
    shapes = [params[name].shape for name in names]
    batch = Batch(batch.tokens, batch.labels.double(), batch.mask, batch.n_strings,
                  batch.n_tokens)

    def loss(flat: torch.Tensor) -> torch.Tensor:
        pieces = torch.split(flat, sizes)
        chosen = {name: piece.view(shape) for name, piece, shape in zip(names, pieces, shapes)}
        return masked_loss(functional_call(model, {**fixed, **chosen}, (batch.tokens,)), batch)

    theta = torch.cat([params[name].detach().reshape(-1) for name in names])
    with sdpa_kernel(SDPBackend.MATH):  # the fused CPU kernels have no second derivative
        matrix = torch.autograd.functional.hessian(loss, theta, vectorize=True)
    return HessianResult(names, sizes, matrix)


def fixed_batch(split, n_strings: int) -> Batch:
    return split.batch(np.arange(min(n_strings, split.n)))
