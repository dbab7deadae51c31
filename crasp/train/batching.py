"""Pre-tensorized, right-padded, length-bucketed batches.

Each split is encoded once into a padded (N, 1 + max length) token tensor with BOS at
position 0 and PAD after the string, a float label tensor aligned with it (label of position
``t`` = the split's label ``t - 1``; BOS and padding get 0 and are masked out), and the number
of positions of each row (string length + 1).

Right padding with a causal mask means a real position never attends to padding, so no key
padding mask is needed and a padded batch computes exactly what each string computes alone
(up to floating-point summation order). Loss and metrics ignore BOS and padding.

Training batches: every epoch the rows are permuted by a numpy ``Generator`` seeded from
(seed, trial, epoch), cut into chunks of ``BUCKET_BATCHES`` batches, sorted by length inside
each chunk, cut into batches, and the batches are shuffled - so batches hold similar lengths
(little padding) and the order is reproducible from the seed alone, with no RNG state to save.
Evaluation batches are built once per split, sorted by length, with at most
``max_tokens`` padded positions per batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

BUCKET_BATCHES = 16


@dataclass
class Batch:
    tokens: torch.Tensor   # (B, T) long
    labels: torch.Tensor   # (B, T) float, 0 at BOS and padding
    mask: torch.Tensor     # (B, T) bool, True at labelled (real, non-BOS) positions
    n_strings: int
    n_tokens: int          # real positions, BOS included

    @property
    def n_labelled(self) -> int:
        return self.n_tokens - self.n_strings

    def to(self, device) -> "Batch":
        if str(device) == "cpu":
            return self
        return Batch(self.tokens.to(device, non_blocking=True),
                     self.labels.to(device, non_blocking=True),
                     self.mask.to(device, non_blocking=True), self.n_strings, self.n_tokens)


@dataclass
class EncodedSplit:
    name: str
    lo: int
    hi: int
    tokens: torch.Tensor    # (N, Tmax) long
    labels: torch.Tensor    # (N, Tmax) float
    lengths: np.ndarray     # (N,) positions per row, BOS included
    _eval_cache: dict = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.tokens.shape[0])

    def batch(self, rows: np.ndarray) -> Batch:
        rows = np.asarray(rows, dtype=np.int64)
        width = int(self.lengths[rows].max())
        index = torch.from_numpy(rows)
        tokens = self.tokens.index_select(0, index)[:, :width]
        labels = self.labels.index_select(0, index)[:, :width]
        lengths = torch.from_numpy(self.lengths[rows])
        position = torch.arange(width)
        mask = (position[None, :] < lengths[:, None]) & (position[None, :] > 0)
        return Batch(tokens, labels, mask, len(rows), int(self.lengths[rows].sum()))

    def train_batches(self, batch_size: int, rng: np.random.Generator) -> list[Batch]:
        order = rng.permutation(self.n)
        chunk = batch_size * BUCKET_BATCHES
        groups: list[np.ndarray] = []
        for start in range(0, self.n, chunk):
            part = order[start:start + chunk]
            part = part[np.argsort(self.lengths[part], kind="stable")]
            groups.extend(part[i:i + batch_size] for i in range(0, len(part), batch_size))
        return [self.batch(groups[i]) for i in rng.permutation(len(groups))]

    def eval_batches(self, max_tokens: int) -> list[Batch]:
        if max_tokens not in self._eval_cache:
            order = np.argsort(-self.lengths, kind="stable")
            batches, current = [], []
            for row in order:
                width = int(self.lengths[current[0]]) if current else int(self.lengths[row])
                if current and (len(current) + 1) * width > max_tokens:
                    batches.append(self.batch(np.array(current)))
                    current = []
                current.append(row)
            if current:
                batches.append(self.batch(np.array(current)))
            self._eval_cache[max_tokens] = batches
        return self._eval_cache[max_tokens]


def encode_split(split, vocab: tuple[str, ...]) -> EncodedSplit:
    """Encode a ``crasp.languages`` Split (strings + per-position labels) once."""
    ids = {token: i for i, token in enumerate(vocab)}
    bos, pad = len(vocab), len(vocab) + 1
    strings = list(split.strings)
    n = len(strings)
    lengths = np.array([len(s) + 1 for s in strings], dtype=np.int64)
    width = int(lengths.max()) if n else 1
    tokens = np.full((n, width), pad, dtype=np.int64)
    labels = np.zeros((n, width), dtype=np.float32)
    tokens[:, 0] = bos
    for row, (string, label) in enumerate(zip(strings, split.labels)):
        if len(label) != len(string):
            raise ValueError(f"split {split.name}: {len(label)} labels for a string of "
                             f"{len(string)} tokens")
        tokens[row, 1:len(string) + 1] = [ids[t] for t in string]
        labels[row, 1:len(string) + 1] = np.asarray(label, dtype=np.float32)
    return EncodedSplit(str(split.name), int(split.lo), int(split.hi),
                        torch.from_numpy(tokens), torch.from_numpy(labels), lengths)


def encode_strings(strings, labels, vocab, name: str = "strings") -> EncodedSplit:
    """Encode plain lists (for tests and tools) the same way as a Split."""
    class _Split:
        pass
    split = _Split()
    split.name, split.strings, split.labels = name, strings, labels
    lens = [len(s) for s in strings] or [0]
    split.lo, split.hi = min(lens), max(lens)
    return encode_split(split, vocab)
