"""Errors meant for people: a location, the offending line with a caret, and what was expected.

Every error crasp raises on bad input derives from ``CraspError``; the command line prints
``render()`` to stderr and exits with status 2, never with a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # for annotations only: the utilities import this module, never the syntax
    from crasp.syntax import Span


class CraspError(Exception):
    """Bad input from a person: a program, a token, an option or a file."""

    exit_code = 2

    def render(self) -> str:
        return f"error: {self}"


def in_words(error: CraspError | OSError) -> str:
    """What the command line prints for ``error``: a ``CraspError``'s ``render()``, or an
    ``OSError`` (a file that cannot be written or read) as its reason and file name."""
    if isinstance(error, CraspError):
        return error.render()
    where = f" ({error.filename})" if error.filename else ""
    return f"error: {error.strerror or error}{where}"


SHOWN_LINE = 100
"""The most characters of a source line an error shows: a window around the column."""


def clipped_line(text: str, index: int) -> tuple[str, int]:
    """``text`` cut to a window of about ``SHOWN_LINE`` characters around ``index`` (marked
    with ``...`` where it was cut), and where ``index`` falls in the result."""
    if len(text) <= SHOWN_LINE:
        return text, index
    start = max(0, min(index - SHOWN_LINE // 3, len(text) - SHOWN_LINE))
    head = "..." if start > 0 else ""
    tail = "..." if start + SHOWN_LINE < len(text) else ""
    return head + text[start:start + SHOWN_LINE] + tail, len(head) + index - start


class ProgramError(CraspError):
    """An error at a place in a program's source text."""

    def __init__(self, message: str, *, source: str, filename: str, span: Span | None,
                 expected: str | None = None, note: str | None = None):
        super().__init__(message)
        self.message = message
        self.source = source
        self.filename = filename
        self.span = span
        self.expected = expected
        self.note = note

    @property
    def line(self) -> int | None:
        return self.span.line if self.span else None

    @property
    def column(self) -> int | None:
        return self.span.column if self.span else None

    def render(self) -> str:
        where = self.filename
        if self.span is not None:
            where += f":{self.span.line}:{self.span.column}"
        parts = [f"{where}: error: {self.message}"]
        if self.span is not None:
            lines = self.source.splitlines()
            if 0 < self.span.line <= len(lines):
                text = lines[self.span.line - 1].expandtabs(1)
                width = 1
                if self.span.end_line == self.span.line and self.span.end_column > self.span.column:
                    width = self.span.end_column - self.span.column
                shown, offset = clipped_line(text, self.span.column - 1)
                parts.append(f"    {shown}")
                width = max(1, min(width, len(shown) - offset))
                parts.append("    " + " " * offset + "^" * width)
        if self.expected:
            parts.append(f"expected: {self.expected}")
        if self.note:
            parts.append(f"note: {self.note}")
        return "\n".join(parts)

    def __str__(self) -> str:
        return self.render()


class InputError(CraspError):
    """A bad input string: a token outside the alphabet, an unreadable file."""
