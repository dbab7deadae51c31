"""Parity helpers: a model's decisions against the interpreter at every position.

``strings_for`` gives every string over a vocabulary up to a length (capped per length so that
large alphabets stay fast) plus seeded random long strings; ``assert_parity`` runs a scorer
(token ids [B, T + 1] with BOS in column 0 -> scores [B, T + 1]) on them and compares the
decision ``score > 0`` at every position, BOS included, with ``crasp.evaluate``.
"""

from __future__ import annotations

import numpy as np

import crasp
from crasp.zoo.strings import check_strings

MAX_PER_LENGTH = 4096


def strings_for(vocab, up_to: int = 8, random_count: int = 16, random_length: int = 48,
                seed: int = 0, per_length: int = MAX_PER_LENGTH) -> list[list[str]]:
    """Every string of length 0..``up_to`` (at most ``per_length`` per length, drawn with
    ``seed`` when there are more), then ``random_count`` random strings of ``random_length``
    (``crasp zoo check``'s strings)."""
    return check_strings(list(vocab), up_to, per_length, random_count, random_length, seed)


def encode(vocab, strings, bos_id: int | None = None, pad_id: int = 0) -> np.ndarray:
    """Ids [B, T_max + 1]: BOS (``len(vocab)`` unless given), the tokens, then ``pad_id``."""
    bos = len(vocab) if bos_id is None else bos_id
    width = max(len(s) for s in strings) + 1
    ids = np.full((len(strings), width), pad_id, dtype=np.int64)
    ids[:, 0] = bos
    for row, string in enumerate(strings):
        ids[row, 1:len(string) + 1] = [vocab.index(token) for token in string]
    return ids


def interpreter_decisions(program, strings) -> list[np.ndarray]:
    """Per string, the program's decision at BOS and after every token."""
    evaluation = crasp.evaluate(program, strings)
    bos = bool(evaluation.accept[[i for i, s in enumerate(strings) if not s][0]]) \
        if any(not s for s in strings) else None
    if bos is None:
        bos = bool(crasp.evaluate(program, [[]]).accept[0])
    return [np.concatenate([[bos], evaluation.output[row, :len(s)]])
            for row, s in enumerate(strings)]


def assert_parity(program, vocab, scorer, strings, batch: int = 2048) -> None:
    """``scorer``'s decisions equal the interpreter's at every position of every string."""
    expected = interpreter_decisions(program, strings)
    by_length: dict[int, list[int]] = {}
    for row, string in enumerate(strings):
        by_length.setdefault(len(string), []).append(row)
    for length, rows in by_length.items():
        for start in range(0, len(rows), batch):
            chunk = rows[start:start + batch]
            scores = np.asarray(scorer(encode(vocab, [strings[r] for r in chunk])))
            for offset, row in enumerate(chunk):
                got = scores[offset, :length + 1] > 0
                assert np.array_equal(got, expected[row]), (
                    f"{' '.join(strings[row]) or 'empty'}: model {got.astype(int).tolist()}, "
                    f"interpreter {expected[row].astype(int).tolist()}")
