"""Running a recursive pass on deeply nested input without overflowing anything.

A pass written recursively (the compiler's linearizer follows the expression tree) runs in a
thread of its own with a large stack and a raised recursion limit, so expressions nested up to
about ``RECURSION_LIMIT`` levels are handled, and deeper ones raise ``RecursionError`` (which the
pass turns into a clear error) instead of overflowing the C stack.
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

STACK_BYTES = 512 << 20
RECURSION_LIMIT = 40_000

Result = TypeVar("Result")


def call_with_deep_stack(function: Callable[[], Result]) -> Result:
    """``function()``, run in a thread with a ``STACK_BYTES`` stack; its exception is re-raised."""
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["value"] = function()
        except BaseException as error:  # handed to the caller's thread
            outcome["error"] = error

    previous_stack = threading.stack_size(STACK_BYTES)
    previous_limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous_limit, RECURSION_LIMIT))
    try:
        worker = threading.Thread(target=target, daemon=True)
        worker.start()
        worker.join()
    finally:
        threading.stack_size(previous_stack)
        sys.setrecursionlimit(previous_limit)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
