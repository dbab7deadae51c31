"""Standard output that fails loudly: a write that does not arrive is exit status 2.

Python leaves three failures silent or noisy in the wrong way, and every ``crasp`` command
writes its results through ``click.echo`` to ``sys.stdout``:

* standard output closed (``crasp run P x >&-``): Python sets ``sys.stdout`` to None and
  ``click.echo`` then writes nothing and the command exits 0;
* a broken pipe (``| head -1`` exited) or a full disk (``> /dev/full``): the error comes from a
  flush, sometimes only at interpreter exit, as "Exception ignored" and exit status 120.

``checked_standard_output()`` puts ``CheckedOutput`` in place of ``sys.stdout`` for the length
of a command: every write and flush that fails (and any write at all to a closed standard
output) raises one ``OutputError`` naming standard output and the reason, and the command ends
with a final flush, so a result that was not delivered is never exit status 0. After the first
failure the real stream's file descriptor is pointed at ``/dev/null``: the unwritten rest of
its buffer then disappears quietly when Python flushes it at exit, instead of failing again.
"""

from __future__ import annotations

import errno
import os
import sys
from contextlib import contextmanager
from typing import Iterator, TextIO

from crasp.util.outputs import OutputError

CLOSED = "it is closed (file descriptor 1 is not open)"


class CheckedOutput:
    """A text stream in front of ``stream`` (None: standard output is closed) whose failures
    are ``OutputError``. It has no ``buffer`` on purpose: click then writes text through it
    instead of going around it to the binary stream."""

    def __init__(self, stream: TextIO | None):
        self.stream = stream
        self.failed = False
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.errors = getattr(stream, "errors", None) or "strict"

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # click probes with b"" whether a stream is binary
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if not text:  # nothing to deliver (click probes with "" too): not a failure
            return 0
        return self._guarded(lambda stream: stream.write(text), len(text))

    def flush(self) -> None:
        if self.stream is not None:  # a closed one holds nothing: every write failed
            self._guarded(lambda stream: stream.flush(), None)

    def isatty(self) -> bool:
        return self.stream is not None and not self.failed and self.stream.isatty()

    def writable(self) -> bool:
        return True

    def _guarded(self, action, discarded):
        if self.failed:  # the one message has been given; the rest goes nowhere
            return discarded
        try:
            if self.stream is None:
                raise OSError(errno.EBADF, CLOSED)
            return action(self.stream)
        except OSError as error:
            self.failed = True
            self._silence()
            raise OutputError(f"cannot write to standard output: "
                              f"{error.strerror or error}") from None

    def _silence(self) -> None:
        try:
            descriptor = self.stream.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
        except (AttributeError, OSError, ValueError):  # closed, or not a real file (tests)
            return
        try:
            os.dup2(null, descriptor)
        except OSError:
            pass
        finally:
            os.close(null)


@contextmanager
def checked_standard_output() -> Iterator[CheckedOutput]:
    """``sys.stdout`` is a ``CheckedOutput`` inside; on the way out, however the body ends,
    everything written is flushed (an ``OutputError`` if that fails, which then replaces the
    body's exit: a result not delivered is never a success) and the original stream is put
    back."""
    original = sys.stdout
    checked = CheckedOutput(original)
    sys.stdout = checked
    try:
        yield checked
    finally:
        try:
            checked.flush()
        finally:
            if sys.stdout is checked:
                sys.stdout = original
