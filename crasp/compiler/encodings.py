"""Pass: (Program, --posenc) -> Encodings. Which positional components the model gets.

A program's positional constructs need these components of the model format (version 3,
``docs/model-format.md``):

* a periodic predicate (``pos_even``, ``mod(m, r)``) needs a *periodic embedding*: a table of
  M rows added to the input at transformer position t by t mod M, for M = the least common
  multiple of the moduli. This is what a sinusoidal encoding at the angles 2 pi k / M is after
  rounding (``sinusoidal``);
* a local relation (``#[offset(c)] P``, ``pred``, ``pred4``) needs an attention head that sees
  exactly the position i - c: an ALiBi head (positive slope: after rounding it sees a bounded
  window, the window lemma) whose query-key score, a circulant function of the residues of t
  and j modulo some M_loc > every offset (what rotary attention at the angles 2 pi k / M_loc
  computes), picks the one position of the window at distance c (``alibi``; the residues come
  from a periodic table of M_loc rows, so ``alibi`` realizes periodic predicates too). With
  periodic predicates as well, M_loc is the least multiple of their period above the largest
  offset, and the one table of M_loc rows serves both.

``--posenc`` names the encoding: ``auto`` (default) takes the least that realizes the program
(none for a program without positional constructs, which is then a version-2 NoPE model);
``nope``, ``sinusoidal`` and ``alibi`` are checked, and a construct the chosen encoding cannot
realize is refused with one message naming the construct and the encodings that can.

Limits. A periodic table has M rows and M residual coordinates, and a local head M_loc query
and key dimensions; both are capped at ``MAX_PERIOD`` so that a model stays a reasonable size
(the exact arithmetic itself needs no extra bits: every table entry and score is a small
integer, see ``local_heads``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from crasp import syntax
from crasp.errors import ProgramError
from crasp.fmt import format_expr

POSENCS = ("auto", "nope", "sinusoidal", "alibi")
MAX_PERIOD = 1024
"""The most rows a periodic table may have (the lcm of the moduli, or the largest offset + 1)."""

CAN_REALIZE = {"periodic predicate": ("sinusoidal", "alibi"), "local relation": ("alibi",)}


@dataclass(frozen=True)
class Encodings:
    """``posenc``: the encoding chosen; ``period``: the rows of the periodic table of the
    periodic predicates (0: none); ``local_period``: those of the local heads' residues (0: no
    local relation, so no ALiBi)."""

    posenc: str
    period: int = 0
    local_period: int = 0

    @property
    def moduli(self) -> tuple[int, ...]:
        """The periodic tables of the model, one per distinct modulus."""
        return tuple(sorted({m for m in (self.period, self.local_period) if m}))

    @property
    def positional(self) -> bool:
        return bool(self.period or self.local_period)


def _constructs(program: syntax.Program):
    """(kind, node) for each positional construct, in source order."""
    for definition in program.definitions:
        for node in filter(syntax.reads_position, syntax.walk(definition.expr)):
            kind = ("periodic predicate" if isinstance(node, syntax.PositionTest)
                    else "local relation")
            yield kind, node


def choose_encodings(program: syntax.Program, posenc: str = "auto") -> Encodings:
    """The encodings of ``program`` under ``--posenc posenc`` (``ProgramError`` at the first
    construct it cannot realize, or at a modulus or offset beyond ``MAX_PERIOD``)."""
    def error(message: str, node: syntax.Expr, note: str) -> ProgramError:
        return ProgramError(message, source=program.source, filename=program.filename,
                            span=node.span, note=note)

    constructs = list(_constructs(program))
    if posenc == "auto":
        kinds = {kind for kind, _ in constructs}
        posenc = ("alibi" if "local relation" in kinds
                  else "sinusoidal" if kinds else "nope")
    period, offset = 1, -1
    for kind, node in constructs:
        able = CAN_REALIZE[kind]
        if posenc not in able:
            shown = format_expr(node)
            raise error(f"--posenc {posenc} cannot realize the {kind} '{shown}'", node,
                        f"the encodings that can: {', '.join(able)}")
        if kind == "periodic predicate":
            period = math.lcm(period, node.modulus)
            if period > MAX_PERIOD:
                raise error(f"the periodic predicates need a periodic table of {period} rows "
                            f"(the lcm of their moduli), more than the compiler's limit of "
                            f"{MAX_PERIOD}", node, "use fewer or smaller moduli")
        else:
            offset = max(offset, node.relation.offset)
            if offset + 1 > MAX_PERIOD:
                raise error(f"the offset {offset} needs a local head of {offset + 1} residues, "
                            f"more than the compiler's limit of {MAX_PERIOD}", node,
                            "use offsets below the limit")
    has_periodic = any(kind == "periodic predicate" for kind, _ in constructs)
    if offset < 0:
        return Encodings(posenc, period if has_periodic else 0, 0)
    shared = period * -(-(offset + 1) // period)   # the least multiple of period above offset
    if shared > MAX_PERIOD:
        raise error(f"the periodic predicates (period {period}) and the offset {offset} need a "
                    f"shared periodic table of {shared} rows, more than the compiler's limit "
                    f"of {MAX_PERIOD}", constructs[-1][1], "use smaller moduli or offsets")
    return Encodings(posenc, shared if has_periodic else 0, shared)
