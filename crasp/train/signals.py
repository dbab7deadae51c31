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
    main thread, never over an ignored signal, and restored on exit. A stop the guarded work
    never acted on (it came after the last look at ``stop``) is delivered again on exit when
    the handler this guard replaced is another guard's, so nesting loses no stop.

    A handler's exception can be lost: Python runs a signal handler in whatever Python code
    the main thread executes next, and an exception raised inside a garbage-collector
    callback or a ``__del__`` is printed and dropped. So the handler records the stop before it
    raises, and work guarded with ``interrupt=True`` calls ``raise_if_stopped`` at its safe
    points (between cells, while waiting on workers) to raise a stop whose exception was lost.
    """

    def __init__(self, interrupt: bool = False):
        self.interrupt = interrupt
        self.stop = False
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum, frame):
        escalate = self.interrupt or (self.stop and signum == signal.SIGINT)
        self.stop = True
        self.signal = signum
        if escalate:
            raise KeyboardInterrupt

    def raise_if_stopped(self) -> None:
        """Raise ``KeyboardInterrupt`` if a stop was asked (its own exception may have been
        dropped where the handler ran)."""
        if self.stop:
            raise KeyboardInterrupt

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

    def __exit__(self, exc_type, *exc) -> None:
        previous = self._previous
        self._previous = {}
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if exc_type is None and self.signal is not None:
            # The stop came after the guarded work last looked at ``stop`` (a run's final
            # validation or scoring) and the work finished anyway. A guard this one stood in
            # for (a sweep's, running cells in its own process) must still hear of it, or the
            # sweep would go on to its next cell as if nothing had been asked: deliver it again.
            handler = previous.get(self.signal)
            if isinstance(getattr(handler, "__self__", None), SignalGuard):
                signal.raise_signal(self.signal)
