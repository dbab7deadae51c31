"""The work budget of a decompilation (``--max-states``), charged before the work is done.

The passes' cost is the number of things they enumerate or write, so that is what is counted,
in units of one state:

    attention tables   every (query state, key state) pair of every head, 1 unit per
                       ``PAIRS_PER_STATE`` pairs (a pair costs a few numbers, a state a table row)
    ALiBi windows      every (query state, key state, distance) entry of a positive-slope
                       head's tables (``windows``: distances 0 .. Delta, which a small slope
                       makes long), counted as pairs
    candidates         every (query state, head output) pair a layer's feed-forward table is
                       evaluated on: the states of the next level are among them
    program            every count term of every comparison written (one per class of states
                       with a non-zero coefficient): the program's size, and with it the time
                       to simplify, print, check and read it back, grows with them
    minimization       every formula the readable pass minimizes, by its number of atoms
                       (``minimization_units``); where it would exceed the budget, the
                       decompiler keeps the exact program as written instead

A pass charges what it is about to do (``charge``); the budget refuses the charge that would
take the total past ``limit``, so the work done never exceeds it (``spent <= limit`` always)
and a model too large is refused after at most ``limit`` units of work, whatever its size.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from crasp.errors import CraspError

DEFAULT_MAX_STATES = 250_000
PAIRS_PER_STATE = 40
"""Attention-table pairs per unit (at the default budget, up to 10^7 pairs: a few hundred MB)."""


EXACT_DIGITS = 15
"""Counts of up to this many digits are written out in full in a refusal, larger ones as
"about d.dd x 10^e": a layer's candidate count is a product over head coordinates, hundreds
of digits for a wide head."""


def count_text(count: int) -> str:
    """A nonnegative ``count`` for people: ``1,234`` up to ``EXACT_DIGITS`` digits, else
    ``about 3.92 x 10^306`` (the leading digits, cut rather than rounded, so never above the
    count)."""
    digits = str(count)
    if count < 0 or len(digits) <= EXACT_DIGITS:
        return f"{count:,}"
    return f"about {digits[0]}.{digits[1:3]} x 10^{len(digits) - 1}"


def minimization_units(atoms: int, exact: bool) -> int:
    """Units of minimizing a formula of ``atoms`` atoms (``readable.minimized``; ``exact``: by
    SymPy rather than by truth table), a unit being about 0.1 ms of CPU as an enumerated state
    is: SymPy took about 7 ms at 5 atoms and 44 ms at 6 on a trained L4 run's 10,000 formulas,
    close to 4^n / 8 units; the truth table of a wider formula about 2^n / 64."""
    return max(1, 4 ** atoms // 8 if exact else 2 ** atoms // 64)


class StateLimitError(CraspError):
    """The work would exceed ``--max-states``; ``spent`` and ``limit`` say how much, and
    ``refused`` (where a ``Budget`` refused it) the charge: what it was for, in words, and
    its units."""

    def __init__(self, message: str, spent: int, limit: int,
                 refused: tuple[str, int] | None = None):
        super().__init__(message)
        self.spent, self.limit, self.refused = spent, limit, refused


@dataclass
class Budget:
    """``limit`` units; ``spent`` so far, and on what (``spent_on``: a kind of work, such as
    "layer 1: attention tables", -> its units, for the refusal message); ``charged(units)`` is
    told of every charge granted (a progress bar's ``update``)."""

    limit: int = DEFAULT_MAX_STATES
    spent: int = 0
    spent_on: dict[str, int] = field(default_factory=dict)
    charged: Callable[[int], object] | None = field(default=None, repr=False, compare=False)

    def charge(self, units: int, kind: str, what: str) -> None:
        """Spend ``units`` on ``what`` (words such as "layer 2 would enumerate 20 (query state,
        head output) pairs"), a piece of the work ``kind``, or raise ``StateLimitError``
        without spending anything when they would take the total past the limit."""
        if self.spent + units > self.limit:
            done = "".join(f"\n  {name}: {count:,}" for name, count in self.spent_on.items())
            raise StateLimitError(
                f"the model has too many states to decompile: {what}, {count_text(units)} "
                f"units of work, {count_text(self.spent + units)} in all > --max-states "
                f"{self.limit:,} (a unit: a state "
                f"enumerated, {PAIRS_PER_STATE} attention-table pairs or a count term written)"
                f"\n  units spent before:{done or ' none'}\n(raise --max-states to try anyway; "
                f"time, memory and the program's size grow with these counts. A head's output "
                f"ranges over up to 2^p values per coordinate, so a narrower model (fewer head "
                f"dimensions: --d-model, --n-heads) or fewer bits (--precision P.S, crasp "
                f"extract --precision) has fewer states)",
                self.spent, self.limit, (what, units))
        self.spent += units
        self.spent_on[kind] = self.spent_on.get(kind, 0) + units
        if self.charged is not None:
            self.charged(units)
