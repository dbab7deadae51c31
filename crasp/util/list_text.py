"""Splitting the list options of the command line (``--depths 1,3,5``, ``--bins 1:50,51:100``,
``--alibi-slopes 0.5 0.25``, ``--grid lr=1e-3,3e-4``) into their items: the one splitter.

An empty item is a typing slip (``1:5,,6:8``, ``,3``, ``3,,``), never a value, so it is refused
with its place named rather than dropped: silently reading ``1:5,,6:8`` as two bins hides
whatever the person meant to write between the commas. One trailing separator is allowed
(``--seeds 5,`` is how the seed 5 is told apart from the count 5).
"""

from __future__ import annotations

import re

from crasp.errors import CraspError

_SPACED_COMMA = re.compile(r"\s*,\s*")
_SPACES = re.compile(r"\s+")


def split_list(text: str, what: str, *, separator: str = ",", spaces: bool = False) -> list[str]:
    """The stripped items of ``text`` separated by ``separator`` outside brackets (``[1, 2]``
    and ``(a, b)`` stay one item); with ``spaces``, runs of whitespace separate items too.

    ``CraspError`` naming ``what`` when an item other than one after a final separator is
    empty. The empty text is the empty list (the caller says whether that is allowed).
    """
    text = text.strip()
    if spaces:
        text = _SPACES.sub(separator, _SPACED_COMMA.sub(",", text))
    items, nesting, current = [], 0, []
    for char in text:
        if char in "([{":
            nesting += 1
        elif char in ")]}":
            nesting -= 1
        if char == separator and nesting == 0:
            items.append("".join(current).strip())
            current = []
        else:
            current.append(char)
    items.append("".join(current).strip())
    if len(items) > 1 and not items[-1]:
        items.pop()
    if items == [""]:
        return []
    for place, item in enumerate(items, 1):
        if not item:
            raise CraspError(f"{what}: item {place} of {text!r} is empty (two "
                             f"{separator!r} in a row, or one at the start); write a value "
                             f"between the separators or remove one")
    return items
