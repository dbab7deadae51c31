"""Timing helper shared by the benchmarks."""

from __future__ import annotations

import time


def best_of(repeats: int, function) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``function()``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)
