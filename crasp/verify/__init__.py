"""Verification: equivalence, emptiness, universality and inclusion of C-RASP programs, decided
for every string up to a length by z3 or by enumeration, and for every length by k-induction.

The passes, one module each:

* ``questions``   the questions as violations at a position (where a domain program holds,
                  if one is given); the default alphabet;
* ``closure``     whether a domain is prefix-closed, by its form or by a proof (then every
                  search assumes it), and sample strings cut to it;
* ``shrink``      Program x alphabet -> a smaller program with the same answers (every search
                  runs on it);
* ``encode``      Program x symbolic tokens -> z3 terms, one position at a time;
* ``bounded``     the shortest violating string by z3 (lengths 0, 1, 2, ... in order);
* ``enumeration`` the shortest violating string by the interpreter on every string;
* ``sweep``       candidate equal definitions of two programs, by simulation (lemmas);
* ``relations``   candidate linear equations between two programs' counts, by simulation
                  (lemmas);
* ``lemmas``      those candidates proved (or dropped) position by position, for ``bounded``;
* ``induction``   k-induction over the programs' counts (proof for every length);
* ``explain``     a violating string re-run by the interpreter, and where the programs part;
* ``vacuity``     whether a yes says anything: does the program its violations need (a
                  domain, an includes' OTHER) accept a nonempty string;
* ``driver``      Question -> Verdict; ``report`` Verdict -> text, JSON, exit status;
* ``cli``         ``crasp equiv``, ``crasp check`` and the ``--prove`` of other commands.

z3 (the ``verify`` extra) is imported only when a search needs it (``solver``, which also holds
the time limit every solver call runs under). See docs/verification.md.
"""

from crasp.verify.driver import Verdict, decide
from crasp.verify.questions import QUESTIONS, Question

__all__ = ["QUESTIONS", "Question", "Verdict", "decide"]
