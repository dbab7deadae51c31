"""The optimizer, its learning-rate schedule, and the RNG state a checkpoint carries: the parts
of a training step that a resumed run must rebuild exactly (``crasp.train.loop`` uses them).

AdamW with weight decay on the matrices only (never embeddings, positional tables, biases or
norms); the learning rate is ``lr * lr_factor(step)``: linear warmup over ``warmup_steps``, then
constant, linear decay to 0, or a cosine to 0 over the run's ``epochs``.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from crasp.train.config import TrainConfig


def make_optimizer(model: torch.nn.Module, config: TrainConfig):
    decay, no_decay = [], []
    for name, parameter in model.named_parameters():
        (decay if parameter.ndim >= 2 and "embed" not in name and ".pos." not in name
         and not name.startswith("pos.") else no_decay).append(parameter)
    groups = [{"params": decay, "weight_decay": config.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=config.lr, betas=(config.adam_beta1, config.adam_beta2))


def lr_factor(step: int, warmup: int, total: int, schedule: str) -> float:
    """Multiplier of the base lr before optimizer step ``step + 1`` (LambdaLR convention)."""
    if warmup and step < warmup:
        return (step + 1) / warmup
    if schedule == "constant" or total <= warmup:
        return 1.0
    progress = min(1.0, (step - warmup) / max(1, total - warmup))
    if schedule == "linear":
        return max(0.0, 1.0 - progress)
    return 0.5 * (1.0 + math.cos(math.pi * progress))


def make_scheduler(optimizer, config: TrainConfig, steps_per_epoch: int):
    total = config.epochs * steps_per_epoch
    return torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: lr_factor(step, config.warmup_steps, total, config.lr_schedule))


def rng_state(device: torch.device) -> dict[str, Any]:
    state = {"cpu": torch.get_rng_state()}
    if device.type == "cuda":
        state["cuda"] = torch.cuda.get_rng_state(device)
    return state


def set_rng_state(state: dict[str, Any], device: torch.device) -> None:
    torch.set_rng_state(state["cpu"])
    if device.type == "cuda" and "cuda" in state:
        torch.cuda.set_rng_state(state["cuda"], device)
