"""Timing helper shared by the benchmarks."""

from __future__ import annotations

import time


def best_of(repeats: int, function) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``function()``, in seconds."""
    return best_of_each(repeats, function)[0]


def best_of_each(repeats: int, *functions, clock=time.perf_counter) -> list[float]:
    """The fastest of ``repeats`` timings of each function by ``clock``, in seconds. The
    functions take turns, so that on a shared machine each meets the same changes of load (a
    ratio of two of them is then steadier than from separate runs); ``time.process_time``
    counts only the processor time of this process, not the time other jobs hold the cores."""
    times = [[] for _ in functions]
    for _ in range(repeats):
        for function, taken in zip(functions, times):
            start = clock()
            function()
            taken.append(clock() - start)
    return [min(taken) for taken in times]
