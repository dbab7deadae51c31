"""Editing one place of a JSON value, for the tests that damage files value by value."""

from __future__ import annotations

import json


def replaced_at(value, place, new):
    """A deep copy of ``value`` with the item at ``place`` (a path of keys and indices)
    replaced by ``new``."""
    value = json.loads(json.dumps(value))
    holder = value
    for step in place[:-1]:
        holder = holder[step]
    holder[place[-1]] = new
    return value
