"""Pass: decompiled program x vocabulary -> a program with the same answers on every string of
the model's own tokens (``crasp decompile --vocabulary-only``, ``crasp extract
--vocabulary-only``), before the readable pass.

Why. ``write_program`` keeps every answer on every input, a token outside the vocabulary
included (the model reads it through its "other token" row, and the program as a position
where no token test holds). That costs a trained model's program most of its length: every
comparison a head makes is written, and on the model's own tokens most of them coincide. The
extraction study's trained L4 run (docs/extraction.md) decompiles to 1,298 definitions whose
50 first-layer comparisons such as ``(117 * #L0_state0) + 157 * #"b" == 0`` all mean ``#"b" ==
0`` or its negation, because ``L0_state0 = !("a" || "b")`` holds at no token of {a, b}. Over its
vocabulary it is two definitions.

Derivation. ``crasp.verify.shrink`` rewrites a program so that every kept definition has the
same value at every position (BOS included) of every string over the alphabet it is given
(its docstring has the three rewrites and why each keeps the values); given the model's
vocabulary, the program answers as the decompiled one, hence as the model, on every string of
those tokens. Nothing is claimed for a string with another token: a body that holds at no
vocabulary token (as ``!("a" || "b")``) becomes ``false``, and such a token is where it holds.
The depth does not grow (a rewrite only replaces a subexpression by token tests or a
constant, or a definition by an equal earlier one). The readable pass then runs on the result
as on any decompiled program.

Precondition: ``program`` is ``write_program``'s, read back, over the alphabet ``vocabulary``.
"""

from __future__ import annotations

import crasp
from crasp.fmt import format_program
from crasp.verify.shrink import shrink

NOTE = ("// Over the vocabulary only: the model's answers on every string of its tokens "
        "(not on a token outside them).")
"""The second line of a program written with --vocabulary-only."""


def over_vocabulary(text: str, program: crasp.Program, vocabulary: tuple[str, ...]
                    ) -> tuple[str, crasp.Program]:
    """``text`` (``write_program``'s) and its ``program`` shrunk for ``vocabulary``, with the
    same first line and ``NOTE`` as the second; the program is the new text, read back."""
    shrunk = format_program(shrink(program, vocabulary)).splitlines()
    new_text = "\n".join([text.splitlines()[0], NOTE, *shrunk]) + "\n"
    return new_text, crasp.parse_program(new_text, filename=program.filename)
