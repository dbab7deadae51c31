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


def best_of_each(repeats: int, *functions, runs_per_turn: int = 2) -> list[float]:
    """The fastest of ``repeats`` x ``runs_per_turn`` wall-clock timings of each function, in
    seconds. The functions take turns, so that on a shared machine each meets the same changes
    of load (a ratio of two of them is then steadier than from separate runs), and in each
    turn a function runs ``runs_per_turn`` times in a row, so that its later runs find the
    processor's caches warmed by itself rather than by the function before it."""
    times = [[] for _ in functions]
    for _ in range(repeats):
        for function, taken in zip(functions, times):
            for _ in range(runs_per_turn):
                start = time.perf_counter()
                function()
                taken.append(time.perf_counter() - start)
    return [min(taken) for taken in times]
