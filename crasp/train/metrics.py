"""Loss and metrics over labelled positions only (BOS and padding never count).

* exact match: the fraction of strings whose every labelled position is predicted right
  (``((pred == label) | ~mask).all(-1)``, so padding never makes a string wrong);
* token accuracy: right labelled positions / labelled positions.

A position is predicted "in the language" iff its logit is > 0. Counts are integers, so
"100% exact match" is ``exact == n``, never a float comparison.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable

import torch
import torch.nn.functional as F

from crasp.train.batching import Batch, EncodedSplit


def masked_loss(logits: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Mean binary cross-entropy over the labelled positions of the batch (no host sync)."""
    losses = F.binary_cross_entropy_with_logits(logits, batch.labels, reduction="none")
    return (losses * batch.mask).sum() / max(1, batch.n_labelled)


def batch_counts(logits: torch.Tensor, batch: Batch) -> tuple[int, int, int]:
    """(strings exactly right, labelled positions right, labelled positions)."""
    right = (logits > 0) == (batch.labels > 0.5)
    exact = int((right | ~batch.mask).all(dim=-1).sum())
    correct = int((right & batch.mask).sum())
    return exact, correct, int(batch.mask.sum())


@dataclass
class SplitMetrics:
    n: int
    exact: int
    token_correct: int
    token_total: int
    loss: float

    @property
    def exact_match(self) -> float:
        return self.exact / self.n if self.n else 0.0

    @property
    def token_accuracy(self) -> float:
        return self.token_correct / self.token_total if self.token_total else 0.0

    @property
    def perfect(self) -> bool:
        return self.n > 0 and self.exact == self.n

    def key(self) -> tuple[int, int]:
        """What "better" means for checkpoint selection: exact strings, then right positions."""
        return (self.exact, self.token_correct)

    def as_dict(self) -> dict:
        return {"exact_match": self.exact_match, "token_accuracy": self.token_accuracy,
                "n": self.n, **{k: v for k, v in asdict(self).items() if k != "n"}}


Scored = Callable[[int], object] | None
"""A callback told after each batch of ``k`` strings a model read (a progress bar's
``update``), or None."""


@torch.inference_mode()
def evaluate(model: torch.nn.Module, split: EncodedSplit, device, max_tokens: int,
             scored: Scored = None) -> SplitMetrics:
    """Metrics of ``model`` (put in eval mode, then restored) on one encoded split;
    ``scored(k)`` is told after each batch of ``k`` strings (a progress bar's ``update``)."""
    was_training = model.training
    model.eval()
    exact = correct = total = 0
    loss_sum = 0.0
    try:
        for batch in split.eval_batches(max_tokens):
            batch = batch.to(device)
            logits = model(batch.tokens).float()
            e, c, t = batch_counts(logits, batch)
            exact, correct, total = exact + e, correct + c, total + t
            loss_sum += float(F.binary_cross_entropy_with_logits(
                logits[batch.mask], batch.labels[batch.mask], reduction="sum"))
            if scored is not None:
                scored(len(batch.tokens))
    finally:
        model.train(was_training)
    return SplitMetrics(split.n, exact, correct, total, loss_sum / total if total else 0.0)
