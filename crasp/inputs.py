"""Reading inputs: whitespace-separated tokens, or plain strings over one-character alphabets.

A line with whitespace is split on it. A line without whitespace is split into characters when
every symbol of the alphabet is one character long (so ``aabb`` means a a b b), and is a single
token otherwise. Hahn's interpreter only splits on whitespace (``aabb`` is one token there):
``split_characters=False`` reads inputs as it does. Like Hahn's tool, empty lines and lines
starting with ``//`` are skipped when reading a stream; an empty command-line argument is the
empty input.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence


def tokenize(text: str, alphabet: Sequence[str], split_characters: bool = True) -> list[str]:
    if any(c.isspace() for c in text) or not split_characters:
        return text.split()
    if text and all(len(symbol) == 1 for symbol in alphabet):
        return list(text)
    return [text] if text else []


def read_lines(lines: Iterable[str], alphabet: Sequence[str], split_characters: bool = True
               ) -> Iterator[tuple[str, list[str]]]:
    """Yield (the line as shown, its tokens) for every non-empty, non-comment line."""
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith("//"):
            continue
        yield stripped, tokenize(stripped, alphabet, split_characters)


def can_be_input_token(text: str) -> bool:
    """Whether some input can hold the token ``text``: inputs are split on whitespace (in
    Hahn's interpreter too), so a token is non-empty and holds no whitespace character."""
    return bool(text) and not any(c.isspace() for c in text)
