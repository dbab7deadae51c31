"""Pass: Question x alphabet x N -> the shortest violating string, by running every string.

Derivation. The answers at the positions of a string are the acceptances of its prefixes
(``crasp.verify.questions``), so running the k^N strings of length exactly N through the
interpreter (``crasp.interpret``, every position at once, BOS included) covers every string of
length <= N. The shortest violation is the violating (string, position) with the smallest
position; among those, the first string in lexicographic order of the alphabet (rows are
generated in that order, and a prefix of an earlier row is not later in that order).

Cost: k^N strings of N + 1 positions, in batches of ``BATCH`` rows, so memory stays bounded.
No solver is needed; ``crasp.verify.driver`` picks this method where k^N is small.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from crasp.interpret import BOS_ID, EncodedBatch, evaluate_encoded
from crasp.util import counting
from crasp.verify.questions import Question
from crasp.verify.solver import UNLIMITED, TimeLimit

BATCH = 1 << 14


@dataclass(frozen=True)
class Violation:
    """The shortest violating string (its tokens) found by a search."""

    tokens: tuple[str, ...]


def strings_of_length(size: int, length: int) -> int:
    """How many strings of length exactly ``length`` enumeration runs (their prefixes cover
    the shorter ones), capped at ``counting.BEYOND_ANY_LIMIT`` (a length of 10^20 is
    refused at once, not computed)."""
    return counting.strings_of_length(size, length)


def token_rows(start: int, stop: int, size: int, length: int) -> np.ndarray:
    """Rows ``start..stop-1`` of the strings of ``length`` tokens over ``size`` symbols, in
    lexicographic order, as symbol indices [rows, length]."""
    numbers = np.arange(start, stop, dtype=np.int64)[:, None]
    weights = size ** np.arange(length - 1, -1, -1, dtype=np.int64)[None, :]
    return (numbers // weights) % size


def first_violation(question: Question, alphabet: tuple[str, ...], max_length: int,
                    limit: TimeLimit = UNLIMITED) -> Violation | None:
    """The shortest string of length <= ``max_length`` over ``alphabet`` on which the question
    is violated, or None; ``Undecided`` if ``limit`` runs out first (a violation found in the
    batches run so far may not be the shortest, so none is returned)."""
    size = len(alphabet)
    total = strings_of_length(size, max_length)
    # token index -> each program's own id for it (its alphabet index, or "not in alphabet")
    indices = [{token: i for i, token in enumerate(p.alphabet)} for p in question.evaluated]
    maps = [np.array([index.get(t, len(index)) for t in alphabet], dtype=np.int64)
            for index in indices]
    best: tuple[int, int] | None = None   # (position column, row)
    best_rows: np.ndarray | None = None
    for start in range(0, total, BATCH):
        limit.expire(f"running every string of length {max_length} ({start:,} of {total:,} "
                     "run)")
        limit.report(f"every string of length {max_length}", start, total)
        stop = min(total, start + BATCH)
        rows = token_rows(start, stop, size, max_length)
        lengths = np.full(stop - start, max_length, dtype=np.int64)
        answers = []
        for program, ids in zip(question.evaluated, maps):
            encoded = np.concatenate([np.full((stop - start, 1), BOS_ID), ids[rows]], axis=1)
            evaluation = evaluate_encoded(program, EncodedBatch(encoded, lengths))
            answers.append(np.asarray(evaluation.columns[program.answer.name], dtype=bool))
        violated = np.asarray(question.violation(answers))
        if not violated.any():
            continue
        columns = violated.any(axis=0)
        column = int(np.argmax(columns))
        row = int(np.argmax(violated[:, column]))
        if best is None or column < best[0]:
            best, best_rows = (column, row), rows
        if column == 0:
            break
    if best is None:
        return None
    column, row = best
    return Violation(tuple(alphabet[k] for k in best_rows[row, :column]))
