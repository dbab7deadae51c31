"""The one signal guard: how crasp's long commands turn Ctrl-C and SIGTERM into a clean stop."""

from __future__ import annotations

import signal
import threading
from typing import Any


class SignalGuard:
    """While active, SIGINT and SIGTERM only set ``stop`` (the training loop stops at the next
    step), or with ``interrupt=True`` raise ``KeyboardInterrupt`` at once (a sweep's parent,
    which then stops its workers).

    A second Ctrl-C raises ``KeyboardInterrupt`` at once. Handlers are installed only in the
    main thread, never over an ignored signal, and restored on exit.
    """

    def __init__(self, interrupt: bool = False):
        self.interrupt = interrupt
        self.stop = False
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum, frame):
        if self.interrupt or (self.stop and signum == signal.SIGINT):
            raise KeyboardInterrupt
        self.stop = True
        self.signal = signum

    def __enter__(self) -> "SignalGuard":
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                try:
                    if signal.getsignal(signum) is signal.SIG_IGN:
                        continue  # e.g. a sweep worker whose parent handles Ctrl-C
                    self._previous[signum] = signal.signal(signum, self._handle)
                except (ValueError, OSError):
                    pass
        return self

    def __exit__(self, *exc) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        self._previous.clear()
