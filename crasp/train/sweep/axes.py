"""Sweep pass 1: the command line's text -> axis values and grid points.

``--depths 1:6``, ``--languages L3:L8``, ``--posenc nope,rope``, ``--seeds 3``, ``--shard 1/4``
``--grid lr=1e-3,3e-4 test_bins=...`` and ``--search paper``: each parsed once here, into plain
values (a grid or search value is typed by the config field it sets, when the config class is
known).
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from typing import Iterable, Sequence

from crasp.errors import CraspError
from crasp.train.field_text import field_types, parse_value
from crasp.util.list_text import split_list

# Cell coordinates come from their own options, never from --grid.
AXES = ("language", "depth", "posenc", "seed")


MAX_AXIS_VALUES = 10_000
"""The most values one axis of a sweep takes (a range of 10^11 depths would be built as a
list of 10^11 integers before any check)."""


def _counted(count: int, what: str, text: str) -> None:
    if count > MAX_AXIS_VALUES:
        raise CraspError(f"{what}: {text!r} is {count:,} values, more than the "
                         f"{MAX_AXIS_VALUES:,} a sweep takes")


def _int(text: str, what: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise CraspError(f"{what}: {text!r} is not an integer") from None


def parse_int_range(text: str, what: str = "--depths") -> list[int]:
    """``"1:6"`` -> 1..6 (inclusive), ``"1,3,5"`` -> [1, 3, 5], ``"2"`` -> [2]; mixes allowed."""
    values: list[int] = []
    for item in split_list(text, what):
        if ":" in item:
            lo, hi = (_int(part.strip(), what) for part in item.split(":", 1))
            if hi < lo:
                raise CraspError(f"{what}: empty range {item!r}")
            _counted(len(values) + hi - lo + 1, what, text)
            values.extend(range(lo, hi + 1))
        else:
            values.append(_int(item, what))
    if not values:
        raise CraspError(f"{what}: no values in {text!r}")
    return _unique(values)


def parse_seeds(text: str) -> list[int]:
    """``"3"`` -> seeds 0, 1, 2 (a count); ``"5:7"`` -> 5, 6, 7; ``"0,4"`` -> 0, 4;
    ``"5,"`` -> 5."""
    text = text.strip()
    if re.fullmatch(r"\d+", text):
        count = int(text)
        if count < 1:
            raise CraspError("--seeds: need at least one seed")
        _counted(count, "--seeds", text)
        return list(range(count))
    return parse_int_range(text, "--seeds")


_NUMBERED = re.compile(r"^([A-Za-z_]*?)(\d+)$")


def parse_languages(text: str) -> list[str]:
    """``"L3:L8"`` -> L3..L8; ``"L3:L8,E3:E6"``; ``"L3,E4,dyck1"``."""
    names: list[str] = []
    for item in split_list(text, "--languages"):
        if ":" in item:
            first, last = (part.strip() for part in item.split(":", 1))
            a, b = _NUMBERED.match(first), _NUMBERED.match(last)
            if not a or not b or a.group(1) != b.group(1):
                raise CraspError(f"--languages: {item!r} is not a range like L3:L8 "
                                 "(same prefix, numbered ends)")
            lo, hi = int(a.group(2)), int(b.group(2))
            if hi < lo:
                raise CraspError(f"--languages: empty range {item!r}")
            _counted(len(names) + hi - lo + 1, "--languages", text)
            names.extend(f"{a.group(1)}{k}" for k in range(lo, hi + 1))
        else:
            names.append(item)
    if not names:
        raise CraspError(f"--languages: no languages in {text!r}")
    return _unique(names)


def parse_names(text: str, what: str = "--posenc") -> list[str]:
    names = [item.lower() for item in split_list(text, what)]
    if not names:
        raise CraspError(f"{what}: no values in {text!r}")
    return _unique(names)


def parse_shard(text: str) -> tuple[int, int]:
    """``"i/n"`` with 0 <= i < n (0-based, as ``$SLURM_ARRAY_TASK_ID`` with ``--array=0-(n-1)``)."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text or "")
    if not match:
        raise CraspError(f"--shard: {text!r} is not of the form i/n (e.g. 0/4)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or index >= count:
        raise CraspError(f"--shard: need 0 <= i < n, got {index}/{count}")
    return index, count


def _unique(values: Iterable) -> list:
    seen, out = set(), []
    for value in values:
        key = json.dumps(value, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(value)
    return out


def parse_grid(entries: Sequence[str], config_cls: type | None = None) -> dict[str, list]:
    """``["lr=1e-3,3e-4", "d_model=64,128"]`` -> ``{"lr": [0.001, 0.0003], "d_model": [64, 128]}``.

    An entry may hold several space-separated ``key=values``. Keys are config field names
    (checked against ``config_cls`` when it is a dataclass); a key given twice is an error.
    """
    types_by_field = field_types(config_cls)
    grid: dict[str, list] = {}
    for entry in entries:
        for item in entry.split():
            if "=" not in item:
                raise CraspError(f"--grid: {item!r} is not KEY=VALUE[,VALUE...]")
            key, _, text = item.partition("=")
            key = key.strip().replace("-", "_")
            if key in AXES:
                option = {"language": "--languages", "depth": "--depths",
                          "posenc": "--posenc", "seed": "--seeds"}[key]
                raise CraspError(f"--grid: {key!r} is a sweep axis; use {option}")
            if key in grid:
                raise CraspError(f"--grid: {key!r} given twice")
            annotation = None
            if types_by_field is not None:
                if key not in types_by_field:
                    close = difflib.get_close_matches(key, list(types_by_field), n=3)
                    hint = f" (did you mean {', '.join(close)}?)" if close else ""
                    raise CraspError(f"--grid: unknown training config field {key!r}{hint}")
                annotation = types_by_field[key]
            values = []
            for value_text in split_list(text, f"--grid {key}"):
                try:
                    values.append(parse_value(value_text, annotation))
                except (ValueError, TypeError) as error:
                    raise CraspError(
                        f"--grid {key}: cannot parse {value_text!r}: {error}") from None
            if not values:
                raise CraspError(f"--grid: no values for {key!r}")
            grid[key] = _unique(values)
    return grid


# The paper's search (pentagonalize/CRASP_depth, make_configs.sh and train.py): heads [1] ->
# d_model [256, 512] -> lr [1e-4, 1e-5], nested in that order, each configuration trained for
# up to 25 epochs at batch size 1. Written as a --search text so that it is parsed, typed and
# recorded exactly as a search given on the command line is.
PAPER_SEARCH = "n_heads=1 d_model=256,512 lr=1e-4,1e-5 batch_size=1 epochs=25"
SEARCH_NAMES = {"paper": PAPER_SEARCH}


def parse_search(entries: Sequence[str], config_cls: type | None = None
                 ) -> tuple[list[dict], str] | None:
    """``--search`` -> (the configurations a cell tries, in order; the search's text), or None.

    ``["paper"]`` is the paper's search (``PAPER_SEARCH``); otherwise the entries are
    ``KEY=V1,V2`` items as ``--grid`` takes them, and the configurations are their product in
    the order given, the first key outermost (the paper's loops: heads, then d_model, then lr).
    A key with one value sets that field in every configuration (``epochs=25``).
    """
    items = [item for entry in entries for item in entry.split()]
    if not items:
        return None
    if len(items) == 1 and items[0].lower() in SEARCH_NAMES:
        items = SEARCH_NAMES[items[0].lower()].split()
    elif any("=" not in item for item in items):
        named = ", ".join(SEARCH_NAMES)
        raise CraspError(f"--search: {' '.join(items)!r} is neither a named search ({named}) "
                         "nor KEY=V1,V2 items")
    try:
        values = parse_grid([" ".join(items)], config_cls)
    except CraspError as error:
        raise CraspError(str(error).replace("--grid", "--search")) from None
    keys = list(values)
    configurations = [dict(zip(keys, point)) for point in itertools.product(*values.values())]
    text = " ".join(f"{key}={','.join(str(v) for v in points)}" for key, points in values.items())
    return configurations, text
