"""Reading inputs: whitespace-separated tokens, or plain strings over one-character alphabets.

A line with whitespace is split on it. A line without whitespace is split into characters when
every symbol of the alphabet is one character long (so ``aabb`` means a a b b), and is a single
token otherwise. Hahn's interpreter only splits on whitespace (``aabb`` is one token there):
``split_characters=False`` reads inputs as it does. Like Hahn's tool, empty lines and lines
starting with ``//`` are skipped when reading a stream; an empty command-line argument is the
empty input.

A stream of inputs (``crasp run``'s standard input) is read as UTF-8 bytes as they arrive:
``\\n``, ``\\r\\n`` and a lone ``\\r`` each end a line (Python's universal newlines), and a
byte-order mark (U+FEFF) at the start of a line is dropped (files concatenated with ``cat``
keep theirs), so neither ever becomes part of a token. A U+FEFF inside a line is an
ordinary character. A line longer than ``max_line_bytes`` is refused as soon as that many
bytes have arrived without a line end: memory stays bounded on any stream (``< /dev/zero``).
"""

from __future__ import annotations

import re
from typing import BinaryIO, Iterable, Iterator, Sequence

from crasp.errors import InputError

MAX_LINE_BYTES = 1_000_000
"""The default limit on one input line (``crasp run --max-line-bytes``). The interpreter holds
a few dozen bytes per position and definition, so a line this long costs tens of megabytes."""
READ_SIZE = 1 << 16
LINE_END = re.compile(rb"\r\n|\r|\n")
BYTE_ORDER_MARK = "\ufeff"
STANDARD_INPUT = "standard input"


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
        stripped = line.removeprefix(BYTE_ORDER_MARK).strip()
        if not stripped or stripped.startswith("//"):
            continue
        yield stripped, tokenize(stripped, alphabet, split_characters)


def line_groups(stream: BinaryIO | None, max_line_bytes: int = MAX_LINE_BYTES,
                name: str = STANDARD_INPUT) -> Iterator[list[str]]:
    """The lines of a binary ``stream``, without their line ends: after each read, one list
    of the lines that read completed (so a caller answers each line as soon as it has
    arrived, and batches what arrived together). A ``\\r`` that ends a read ends its line at
    once; a ``\\n`` that then starts the next read is the rest of that ``\\r\\n``. A bad line
    (too long, not UTF-8) is an ``InputError`` after the lines before it."""
    if stream is None:
        raise InputError(f"{name} is closed: give the inputs as arguments")
    pending, after_cr, number = b"", False, 0
    while chunk := stream.read1(READ_SIZE):
        if after_cr and chunk.startswith(b"\n"):
            chunk = chunk[1:]
        after_cr = chunk.endswith(b"\r")
        *complete, pending = LINE_END.split(pending + chunk)
        group = []
        try:
            for line in complete:
                number += 1
                group.append(_line_text(line, number, max_line_bytes, name))
            _check_length(len(pending), number + 1, max_line_bytes, name)
        except InputError:
            if group:
                yield group
            raise
        if group:
            yield group
    if pending:
        yield [_line_text(pending, number + 1, max_line_bytes, name)]


def _check_length(length: int, number: int, max_line_bytes: int, name: str) -> None:
    if length > max_line_bytes:
        raise InputError(f"{name}: line {number} is longer than {max_line_bytes:,} bytes, the "
                         f"limit on one input (--max-line-bytes)")


def _line_text(line: bytes, number: int, max_line_bytes: int, name: str) -> str:
    _check_length(len(line), number, max_line_bytes, name)
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InputError(f"{name}: line {number} is not UTF-8 text (byte {error.start + 1} of "
                         f"the line)") from None


def can_be_input_token(text: str) -> bool:
    """Whether some input can hold the token ``text``: inputs are split on whitespace (in
    Hahn's interpreter too), so a token is non-empty and holds no whitespace character."""
    return bool(text) and not any(c.isspace() for c in text)
