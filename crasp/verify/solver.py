"""The z3 solver, imported only when a question needs it (the ``verify`` extra).

crasp's core never imports z3; ``crasp equiv`` and ``crasp check`` load it through ``z3()``,
which turns a missing installation into one line on stderr (exit status 2) instead of a
traceback. Enumeration needs no solver and works without it.
"""

from __future__ import annotations

from types import ModuleType

from crasp.errors import CraspError

INSTALL_HINT = "pip install 'crasp[verify]' (or pip install z3-solver)"


def z3() -> ModuleType:
    """The ``z3`` module, or a ``CraspError`` saying how to install it."""
    try:
        import z3 as module
    except ImportError:
        raise CraspError(f"this needs the z3 solver, which is not installed: {INSTALL_HINT}; "
                         "or use --method enumerate") from None
    return module
