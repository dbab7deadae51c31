"""Text -> a training config field's value: the one parser behind ``crasp train --FIELD``,
``crasp train --set KEY=VALUE`` and ``crasp sweep --grid KEY=V1,V2``.

A value is parsed by the type its ``TrainConfig`` field declares (``parse_value``): ``int``,
``float``, ``bool`` (true/false/yes/no/on/off/1/0), ``str``, ``X | None`` ("none"), ``Literal``
choices (case-insensitive), lists and tuples as JSON or ``LO:HI``. Two spellings differ only
where a list holds a comma:

* the option spelling (``--test-bins 251:300,351:400@skewed``, ``--alibi-slopes 0.5,0.25``,
  ``--ffn-widths 256,256+64``, ``--set test_bins=...``), ``parse_field``;
* the grid spelling, where commas separate grid values: lists are JSON (``[0.5,0.25]``) or,
  for bins, joined by ``+`` (``251:300+351:400@skewed``), ``parse_value``.

``TrainConfig.normalized`` then gives every value its canonical type; ``validate`` checks it,
once, when the config is resolved.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import types
import typing
from typing import Any, Callable

from crasp.errors import CraspError
from crasp.languages.datasets import parse_bin, parse_test_bins
from crasp.util.list_text import split_list
_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
_BIN_TEXT = r"\d+\s*:\s*\d+(@[\w-]+)?"


def field_types(config_cls: type | None) -> dict[str, Any] | None:
    """Field name -> type annotation of the trainer's config dataclass (None if unknown)."""
    if config_cls is None or not dataclasses.is_dataclass(config_cls):
        return None
    try:
        hints = typing.get_type_hints(config_cls)
    except (NameError, TypeError):  # unresolvable annotations: fall back to the raw strings
        hints = {}
    return {f.name: hints.get(f.name, f.type) for f in dataclasses.fields(config_cls)}


def parse_value(text: str, annotation: Any = None) -> Any:
    """Parse one grid value with the type of its config field.

    ``int``, ``float``, ``bool`` (true/false/yes/no/1/0), ``str``, ``X | None`` ("none"),
    ``Literal``; tuples and lists as JSON (``[0.5,0.25]``) or ``lo:hi`` for a pair of ints;
    a list of pairs also as ``251:300+301:350``.
    Without a known type: JSON if it parses, else the text.
    """
    text = text.strip()
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if annotation is None or annotation is Any or isinstance(annotation, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    if origin in (typing.Union, types.UnionType):
        if type(None) in args and text.lower() in ("none", "null"):
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return parse_value(text, arg)
            except (ValueError, TypeError) as error:
                errors.append(str(error))
        raise ValueError("; ".join(errors) or f"cannot parse {text!r}")
    if origin is typing.Literal:
        for option in args:
            if str(option) == text or (isinstance(option, str) and option.lower() == text.lower()):
                return option
        raise ValueError(f"{text!r} is not one of {', '.join(map(str, args))}")
    if annotation is bool:
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
        raise ValueError(f"{text!r} is not a boolean (true/false)")
    if annotation is int:
        try:
            return int(text)
        except ValueError:
            number = float(text)
            if not number.is_integer():
                raise ValueError(f"{text!r} is not an integer") from None
            return int(number)
    if annotation is float:
        return float(text)
    if annotation is str:
        return text
    if origin in (tuple, list) or annotation in (tuple, list):
        item = args[0] if args else None
        if origin is list and (item is tuple or typing.get_origin(item) is tuple) and \
                re.fullmatch(rf"{_BIN_TEXT}(\s*\+\s*{_BIN_TEXT})*", text):
            # a list of bins: 251:300+301:350@skewed (a comma would separate grid values); a
            # bin with a test distribution stays text, which the config parses
            return [part if "@" in part else parse_value(part, tuple[int, int])
                    for part in split_list(text, "test_bins", separator="+")]
        pair = re.fullmatch(r"(-?\d+)\s*:\s*(-?\d+)", text)
        value = [int(pair.group(1)), int(pair.group(2))] if pair else json.loads(text)
        if not isinstance(value, list):
            raise ValueError(f"{text!r} is not a list")
        if args and args[-1] is not Ellipsis and len(args) == len(value):
            value = [_coerce(v, a) for v, a in zip(value, args)]
        elif args:
            value = [_coerce(v, args[0]) for v in value]
        return tuple(value) if (origin or annotation) is tuple else value
    try:
        return json.loads(text)
    except ValueError:
        return text


def _coerce(value: Any, annotation: Any) -> Any:
    if isinstance(value, (list, str)) and annotation not in (str, Any):
        return parse_value(json.dumps(value) if isinstance(value, list) else value, annotation)
    if annotation is float and isinstance(value, int):
        return float(value)
    return value


def _parse_floats(text: str) -> list[float]:
    try:
        return [float(part) for part in split_list(text, "--alibi-slopes", spaces=True)]
    except ValueError:
        raise CraspError(f"expected comma-separated numbers, got {text!r}") from None


def _parse_widths(text: str) -> list[list[int]]:
    """``"256,256+64"`` -> ``[[256], [256, 64]]``: one list of hidden widths per layer."""
    try:
        return [[int(width) for width in split_list(layer, "--ffn-widths", separator="+")]
                for layer in split_list(text, "--ffn-widths")]
    except ValueError:
        raise CraspError(f"--ffn-widths: expected widths like 256,256+64, got {text!r}") from None


def _parse_moduli(text: str) -> list[int]:
    try:
        return [int(part) for part in split_list(text, "--moduli", spaces=True)]
    except ValueError:
        raise CraspError(f"--moduli: expected comma-separated integers, got {text!r}") from None


# Fields whose option spelling is not the grid spelling (a comma-separated list).
OPTION_SPELLINGS: dict[str, Callable[[str], Any]] = {
    "train_bin": parse_bin, "test_bins": functools.partial(parse_test_bins, what="--test-bins"),
    "alibi_slopes": _parse_floats, "ffn_widths": _parse_widths, "moduli": _parse_moduli,
}


def parse_field(name: str, text: str, config_cls: type) -> Any:
    """The value of field ``name`` of ``config_cls`` written as ``text`` in the option spelling
    (JSON is accepted for any list field too). ``CraspError`` naming the field otherwise."""
    annotation = field_types(config_cls)[name]
    stripped = text.strip()
    try:
        if name in OPTION_SPELLINGS and not stripped.startswith("["):
            return OPTION_SPELLINGS[name](stripped)
        return parse_value(stripped, annotation)
    except (ValueError, TypeError) as error:
        raise CraspError(f"{name}: cannot parse {text!r}: {error}") from None
