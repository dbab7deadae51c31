"""Names for the state classes of a decompiled program (``write_program``), from the model's
residual labels.

A *literal* of level l is "coordinate j of the state is nonzero" (named for label j, ``x``) or
"is zero" (``not_x``), for each label that makes an identifier. A class whose member states
are exactly those where one literal holds takes its name (``L1_x``); else one where exactly two
hold, conjoined (``L1_x_not_y``), the shortest such name first; else ``L{level}_state{n}``.
Only the names depend on this: the formulas are the same whichever name a class gets.

Cost. The first version built, for every class, the column of every literal and of every pair
of literals over all states of its level: labels^2 x states booleans per class (18 GB on a
wide model). Here:

* the single literals of a level are indexed once by their column (packed bits, as a
  dictionary key): time labels x states per level, and one lookup per class;
* a pair can match only when both literals hold at every member, so only those
  (``superset``, at most ``MAX_PAIRED`` of them, in label order) are paired, and a pair
  matches when no state outside the class has both: ``MAX_PAIRED``^2 x (states outside) per
  class, counted against ``PAIR_WORK`` per level. Past it, a level's remaining classes are
  named by single literals only (a name, never a formula, is lost).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

MAX_PAIRED = 32
"""The most literals holding at every member of a class that are paired for its name."""
PAIR_WORK = 20_000_000
"""Per level, the most (literal, literal, state) checks the pairs may cost (a few tenths of a
second); the classes named after it is spent get single-literal names or numbers."""


def identifier(label: str) -> str | None:
    """The identifier a residual label gives its literals (None: the label makes none)."""
    name = re.sub(r"[^A-Za-z0-9_]+", "_", label.split(":")[0]).strip("_")
    return name if name and not name[0].isdigit() else None


class ClassNamer:
    """``candidates(level, members)``: the label names of a class, best first."""

    def __init__(self, states: list[np.ndarray], labels: list[str]):
        self.states = states
        self.bases = [(j, base) for j, label in enumerate(labels) if (base := identifier(label))]
        self.columns = np.array([j for j, _ in self.bases], dtype=np.int64)
        self.singles: dict[int, dict[bytes, list[str]]] = {}
        self.pair_work: dict[int, int] = {}

    def _singles(self, level: int) -> dict[bytes, list[str]]:
        if level not in self.singles:
            index: dict[bytes, list[str]] = {}
            for j, base in self.bases:
                nonzero = self.states[level][:, j] != 0
                for name, column in ((base, nonzero), (f"not_{base}", ~nonzero)):
                    index.setdefault(np.packbits(column).tobytes(), []).append(name)
            self.singles[level] = index
        return self.singles[level]

    def candidates(self, level: int, members: np.ndarray) -> Iterator[str]:
        """The names whose literals hold exactly at ``members`` (a mask of the level's
        states): single literals in label order, then pairs by the length of their name."""
        members = np.asarray(members, dtype=bool)
        yield from self._singles(level).get(np.packbits(members).tobytes(), [])
        if not self.bases:
            return
        states = self.states[level]
        inside = states[members][:, self.columns] != 0
        superset = [(name, position, polarity)   # in label order, x before not_x
                    for position, (_, base) in enumerate(self.bases)
                    for name, polarity, holds in (
                        (base, True, inside[:, position].all()),
                        (f"not_{base}", False, not inside[:, position].any()))
                    if holds][:MAX_PAIRED]
        outside = ~members
        work = len(superset) ** 2 * int(outside.sum())
        if len(superset) < 2 or self.pair_work.get(level, 0) + work > PAIR_WORK:
            return
        self.pair_work[level] = self.pair_work.get(level, 0) + work
        rest = states[outside][:, self.columns[[p for _, p, _ in superset]]] != 0
        holds = np.where([polarity for _, _, polarity in superset], rest, ~rest)
        shared = holds.T.astype(np.float32) @ holds.astype(np.float32)   # both hold, outside
        pairs = [f"{superset[i][0]}_{superset[k][0]}" for i in range(len(superset))
                 for k in range(i + 1, len(superset)) if shared[i, k] == 0]
        yield from sorted(pairs, key=len)
