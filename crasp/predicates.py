"""Built-in positional predicates. No user Python is ever executed.

Positions are the input tokens, numbered from 0 as in Hahn's interpreter (Huang et al. number
from 1, so their "even" is our ``!pos_even``). The BOS position, which only a transformer sees,
is number -1.

Unary (periodic) predicates are Boolean atoms:

* ``pos_even`` (needs ``#import pos_even``): i % 2 == 0.
* ``mod(m, r)`` (built in): i % m == r, for m >= 1 and 0 <= r < m. Python's modulo, so at
  BOS (i = -1) ``mod(m, r)`` holds iff r == m - 1.

Binary (local) relations guard a count, ``#[rel] P`` = the number of j <= i with rel(i, j) and
P(j); every local relation here is j = i - c for a constant c >= 0:

* ``pred`` (needs ``#import pred``): j = i - 1.
* ``pred4`` (needs ``#import pred4``): j = i - 4.
* ``offset(c)`` (built in): j = i - c, for c >= 0.

A position j < 0 (before the first token) never counts.
"""

from __future__ import annotations

IMPORTABLE_UNARY: dict[str, tuple[int, int]] = {"pos_even": (2, 0)}
"""Hahn's unary predicates: name -> (modulus, residue)."""

IMPORTABLE_RELATIONS: dict[str, int] = {"pred": 1, "pred4": 4}
"""Hahn's binary predicates: name -> offset c in j = i - c."""

IMPORTABLE = tuple(IMPORTABLE_UNARY) + tuple(IMPORTABLE_RELATIONS)

BUILTIN_UNARY_CALL = "mod"
BUILTIN_RELATION_CALL = "offset"
