"""The optimizer, its learning-rate schedule, and the RNG state a checkpoint carries: the parts
of a training step that a resumed run must rebuild exactly (``crasp.train.loop`` uses them).

AdamW with weight decay on the matrices only (never embeddings, positional tables, biases or
norms); the learning rate is ``lr * lr_factor(step)``: linear warmup over ``warmup_steps``, then
constant, linear decay to 0, or a cosine to 0 over the run's ``epochs``.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import torch

from crasp.train.config import TrainConfig
from crasp.train.run import check_finite


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


ADAMW_MOMENTS = ("step", "exp_avg", "exp_avg_sq")
"""What torch's AdamW keeps per parameter once it has stepped it (with amsgrad, one more)."""


def load_resumed(state: dict[str, Any], model: torch.nn.Module, optimizer, scheduler,
                 device: torch.device) -> None:
    """Load a resume state's tensors into the run's freshly built model, optimizer, schedule
    and RNG. Any exception means the state is not this run's (the caller says so)."""
    fresh = optimizer.state_dict(), scheduler.state_dict()
    with warnings.catch_warnings():  # torch's, about a damaged state's values
        warnings.simplefilter("ignore")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
    check_finite(model.state_dict(), "model")  # else it trains on, every weight turning NaN
    check_loaded(optimizer, scheduler, *fresh)
    set_rng_state(state["rng"], device)


def check_loaded(optimizer, scheduler, fresh_optimizer: dict, fresh_scheduler: dict) -> None:
    """Raise ``ValueError`` where the optimizer or schedule state a resume loaded departs from
    the form ``make_optimizer`` and ``make_scheduler`` build for this run (``fresh_*``: their
    state dicts before loading): torch's ``load_state_dict`` checks only the parameter groups'
    sizes, so a moment missing or of another shape, or a learning rate that is not a number
    (or an int no float64 operation takes), would fail at the next step, deep inside it."""
    problem = (_form_mismatch(optimizer.state_dict()["param_groups"],
                              fresh_optimizer["param_groups"], "optimizer.param_groups")
               or _form_mismatch(scheduler.state_dict(), fresh_scheduler, "scheduler"))
    if problem:
        raise ValueError(problem)
    for group in optimizer.param_groups:
        moments = {*ADAMW_MOMENTS, *(["max_exp_avg_sq"] if group["amsgrad"] else [])}
        for parameter in group["params"]:
            state = optimizer.state.get(parameter, {})
            if state and set(state) != moments:  # empty: a parameter never stepped
                raise ValueError(f"an optimizer state holds {sorted(map(str, state))}, not "
                                 f"AdamW's {sorted(moments)}")
            for name, value in state.items():
                shape = () if name == "step" else tuple(parameter.shape)
                if not (torch.is_tensor(value) and value.is_floating_point()
                        and tuple(value.shape) == shape):
                    raise ValueError(f"optimizer moment {name!r} is not a float tensor of "
                                     f"shape {shape}")
                # a negative step overflows beta ** step, a negative second moment has no
                # square root, and any NaN spreads to every weight it updates
                if not bool(torch.isfinite(value).all()):
                    raise ValueError(f"optimizer moment {name!r} holds non-finite values")
                if name != "exp_avg" and bool((value < 0).any()):
                    raise ValueError(f"optimizer moment {name!r} holds negative values")


def _form_mismatch(value: Any, reference: Any, place: str) -> str | None:
    """Where ``value`` departs from ``reference``'s form: the same keys, lengths, tensor shapes
    and kinds of scalar (for a number: a finite float, or an int that fits int64)."""
    if isinstance(reference, dict):
        if not isinstance(value, dict) or set(value) != set(reference):
            return f"{place} does not have the keys {sorted(map(str, reference))}"
        return next((problem for key in reference if (problem := _form_mismatch(
            value[key], reference[key], f"{place}.{key}"))), None)
    if isinstance(reference, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(reference):
            return f"{place} is not a list of {len(reference)}"
        return next((problem for index, (item, expected) in enumerate(zip(value, reference))
                     if (problem := _form_mismatch(item, expected, f"{place}[{index}]"))), None)
    if torch.is_tensor(reference):
        fits = torch.is_tensor(value) and value.shape == reference.shape \
            and value.dtype == reference.dtype
    elif isinstance(reference, (int, float)) and not isinstance(reference, bool):
        # torch converts an int beyond int64 nowhere (OverflowError at the next step)
        fits = isinstance(value, float) and math.isfinite(value) or \
            isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2 ** 63
    else:
        fits = type(value) is type(reference)
    return None if fits else f"{place} is {type(value).__name__}, not like {reference!r}"
