"""The shape of the JSON a file holds: declared once per file, checked before any code indexes
into it, so that a hand-edited or damaged record is refused in one sentence naming the place
(``trials[2].epochs: expected an integer, got "x"``), not with a ``TypeError`` deep in a reader.

A shape is one of the scalar names (``NUMBER``: an int or float, never a bool; ``FINITE``: a
number neither infinite nor NaN; ``INTEGER``; ``STRING``; ``BOOLEAN``; ``ANY``), ``Count`` (an
integer from 0 to a limit: a count that a reader loops over), or ``OrNull``
(the shape or null), ``ListOf``, ``MapOf`` (an object with any keys) and ``Object`` (named keys,
each optional unless listed in ``required``; other keys are allowed and not checked).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

NUMBER, FINITE, INTEGER = "a number", "a finite number", "an integer"
STRING, BOOLEAN, ANY = "a string", "true or false", "any"


@dataclass(frozen=True)
class Count:
    limit: int


@dataclass(frozen=True)
class OrNull:
    inner: Any


@dataclass(frozen=True)
class ListOf:
    item: Any


@dataclass(frozen=True)
class MapOf:
    value: Any


@dataclass(frozen=True)
class Object:
    fields: Mapping[str, Any]
    required: frozenset = field(default_factory=frozenset)


def _scalar_fits(value: Any, shape: str) -> bool:
    if shape == ANY:
        return True
    if isinstance(value, bool):
        return shape == BOOLEAN
    number = isinstance(value, (int, float))
    return {NUMBER: number, FINITE: number and math.isfinite(value),
            INTEGER: isinstance(value, int), STRING: isinstance(value, str)}.get(shape, False)


def _describe(value: Any) -> str:
    text = json.dumps(value, allow_nan=True, default=repr)
    return text if len(text) <= 60 else text[:57] + "..."


def _expected(shape: Any) -> str:
    if isinstance(shape, str):
        return shape
    if isinstance(shape, Count):
        return f"an integer from 0 to {shape.limit:,}"
    if isinstance(shape, OrNull):
        return f"{_expected(shape.inner)} or null"
    return "a list" if isinstance(shape, ListOf) else "an object"


def mismatch(value: Any, shape: Any, place: str = "") -> str | None:
    """The first place where ``value`` departs from ``shape``, in words; None if it fits."""
    def at(key: str) -> str:
        return f"{place}.{key}" if place else key

    if isinstance(shape, OrNull):
        if value is None:
            return None
        expected, shape = _expected(shape), shape.inner
    else:
        expected = _expected(shape)
    if isinstance(shape, str):
        fits = _scalar_fits(value, shape)
    elif isinstance(shape, Count):
        fits = _scalar_fits(value, INTEGER) and 0 <= value <= shape.limit
    elif isinstance(shape, ListOf):
        fits = isinstance(value, list)
    else:
        fits = isinstance(value, dict)
    if not fits:
        where = f"{place}: " if place else ""
        return f"{where}expected {expected}, got {_describe(value)}"
    if isinstance(shape, ListOf):
        for index, item in enumerate(value):
            problem = mismatch(item, shape.item, f"{place}[{index}]")
            if problem:
                return problem
    elif isinstance(shape, MapOf):
        for key, item in value.items():
            problem = mismatch(item, shape.value, at(key))
            if problem:
                return problem
    elif isinstance(shape, Object):
        for key in sorted(shape.required):
            if key not in value:
                return f"{at(key)}: missing"
        for key, inner in shape.fields.items():
            if key in value:
                problem = mismatch(value[key], inner, at(key))
                if problem:
                    return problem
    return None
