"""How many strings a search would run, computed without building an astronomical integer:
``alphabet_size ** length`` for a length of 10^20 takes forever to compute, so a count past
``BEYOND_ANY_LIMIT`` is reported as that (every budget it is compared with is far smaller)."""

from __future__ import annotations

BEYOND_ANY_LIMIT = 1 << 63


def strings_of_length(size: int, length: int) -> int:
    """``size ** length``, or ``BEYOND_ANY_LIMIT`` where it is at least that."""
    if length == 0 or size <= 1:
        return 1 if length == 0 else size
    if length >= 64:   # size >= 2: at least 2^64
        return BEYOND_ANY_LIMIT
    return min(size ** length, BEYOND_ANY_LIMIT)


def strings_up_to(size: int, length: int) -> int:
    """How many strings of length 0..``length`` there are over ``size`` tokens, or
    ``BEYOND_ANY_LIMIT`` where they are at least that many."""
    if size <= 1:
        return min(length + 1, BEYOND_ANY_LIMIT) if size == 1 else 1
    total = 0
    for n in range(min(length, 64) + 1):   # from length 64 on, one length alone is the cap
        total = min(total + strings_of_length(size, n), BEYOND_ANY_LIMIT)
    return total
