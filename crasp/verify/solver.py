"""The z3 solver, imported only when a question needs it (the ``verify`` extra), and the time
limit and memory budget every search runs under.

crasp's core never imports z3; ``crasp equiv`` and ``crasp check`` load it through ``z3()``,
which turns a missing installation into one line on stderr (exit status 2) instead of a
traceback. Enumeration needs no solver and works without it.

Every solver call goes through ``TimeLimit.check``: it gives z3 what is left of the limit
(``--timeout``) and turns z3's third answer, ``unknown`` (the time ran out, or z3 gave up),
into ``Undecided``, which the driver reports as the answer ``unknown`` with z3's reason. So no
caller can mistake an undecided call for ``unsat``, the answer that proves.

The memory budget (``--max-memory``) is z3's global parameter ``memory_max_size``, set for the
whole question by ``memory_budget`` (given to z3 at the question's first ``z3()``). z3 counts
every allocation of its own (terms, solver state) against it, and the first one past it fails
with ``Z3Exception("out of memory")``, from whichever call allocated: a solver call
(``TimeLimit.check``; there z3 may instead answer ``unknown`` with the reason ``out of
memory``) or a call that builds terms.
``out_of_memory_undecided`` turns that exception into ``Undecided``, so it too ends in the
answer ``unknown``. Why a budget: the bounded search keeps every position's terms and
lemmas, so its memory grows linearly with N (docs/verification.md: a budget of 50 MB
decides examples/L3.crasp against itself up to length 225, 100 MB up to 506), and only
``--timeout`` bounded it.

After the question the budget before it is restored, and that can fail: z3 keeps counting
what it held when it ran out, terms dropped or not (scripts/z3_memory_after_running_out.py:
a budget of 36 MB ran out with 60 MB counted, 59 MB after every term was dropped), and
setting or reading a parameter allocates too, so past the budget it can fail (z3 then only
prints ``WARNING: out of memory``; the value stays). So crasp reads the budgets it set from
its own records, never from z3 when z3 may be out of memory, and confirms every change it
makes by reading it back, retrying after Python drops what it still holds of z3's terms. A
budget z3 will not lift is left to the next question that needs z3, which tries again and
otherwise refuses with a ``CraspError`` (ask in a new process): never a question run under
a budget nobody asked for, never a reason that names the wrong budget.
"""

from __future__ import annotations

import gc
import math
import os
import sys
import time
from contextlib import contextmanager
from types import ModuleType
from typing import Callable

from crasp.errors import CraspError

INSTALL_HINT = "pip install 'crasp[verify]' (or pip install z3-solver)"
MEMORY_PARAMETER = "memory_max_size"
"""z3's global parameter for the memory budget, in megabytes (0: none)."""
BUDGET_ATTEMPTS = 3
"""How many times a budget is set before crasp gives up on z3 taking it (``_set_budget``)."""
LARGEST_MEMORY_BUDGET = 2**32 - 1
"""The largest budget z3 takes, in megabytes (an unsigned int: 4 PB); past it z3 only prints
a warning and keeps the budget it had, so a larger one is refused instead."""


def z3() -> ModuleType:
    """The ``z3`` module, or a ``CraspError`` saying how to install it; under a memory budget
    not yet given to z3, the budget is set first (``memory_budget``)."""
    try:
        import z3 as module
    except ImportError:
        raise CraspError(f"this needs the z3 solver, which is not installed: {INSTALL_HINT}; "
                         "or use --method enumerate") from None
    if _unlifted is not None:
        _lift_left_over(module)
    if _budgets and _budgets[-1].before is None:
        _budgets[-1].give_to(module)
    return module


class Undecided(Exception):
    """A search could not decide the question: ``reason`` says why (for people);
    ``holds_up_to``, where known, the longest length up to which no string violates it;
    ``timed_out``, whether the time limit ran out (rather than z3 giving up otherwise);
    ``out_of_memory``, whether z3 ran out of memory (its budget, ``--max-memory``)."""

    def __init__(self, reason: str, holds_up_to: int | None = None, timed_out: bool = False,
                 out_of_memory: bool = False):
        super().__init__(reason)
        self.reason, self.holds_up_to, self.timed_out = reason, holds_up_to, timed_out
        self.out_of_memory = out_of_memory

    def at(self, where: str, holds_up_to: int) -> Undecided:
        """The same cause, said to be ``where`` (appended to the reason), with the lengths
        known to hold: a search passing it on keeps whether time or memory ran out."""
        return Undecided(f"{self.reason}, {where}", holds_up_to, self.timed_out,
                         self.out_of_memory)


CGROUP_MEMORY_LIMITS = ("/sys/fs/cgroup/memory.max",
                        "/sys/fs/cgroup/memory/memory.limit_in_bytes")
"""Where Linux states the memory limit of this process's control group (v2, then v1): in a
container it is what the process may use, while the physical memory is the host's."""


def default_memory_budget(limit_files: tuple[str, ...] = CGROUP_MEMORY_LIMITS) -> int | None:
    """The budget of ``crasp equiv`` and ``crasp check`` without ``--max-memory``, and of
    ``--prove``: half of the memory this process may use, in megabytes: the machine's physical
    memory, or its control group's limit where that is less (``limit_files``; None where the
    system says neither). Why half: z3 counts only its own allocations, and the process
    around it (the interpreter's samples, Python) needs the rest; a search asked for an
    astronomical N then ends with ``unknown`` instead of the system killing it, or the
    machine swapping."""
    sizes = []
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and page_size > 0:
            sizes.append(pages * page_size)
    except (AttributeError, ValueError, OSError):   # no sysconf (Windows), or no such name
        pass
    for path in limit_files:
        try:
            with open(path, encoding="ascii") as limit:
                stated = limit.read().strip()
        except (OSError, UnicodeDecodeError):
            continue
        if stated.isdigit() and int(stated) > 0:   # v2 says "max" where there is no limit
            sizes.append(int(stated))
    return max(min(sizes) // 2**21, 1) if sizes else None


class _Budget:
    """One ``memory_budget`` block: its megabytes, and z3's budget before it once it is set."""

    def __init__(self, megabytes: int):
        self.megabytes, self.before = megabytes, None

    def give_to(self, z: ModuleType) -> None:
        # z3's Python API makes its one context on first use; made under a budget too small
        # for it, the context is null and the next call crashes the process (a 2 MB budget did)
        z.main_ctx()
        # kept first: where z3 took the budget but would not say so, the block's end lifts it
        self.before = _in_force(z)
        if not _set_budget(z, str(self.megabytes)):
            raise CraspError(f"z3 would not take the memory budget of {self.megabytes:,} MB "
                             f"(it is past the budget of {self.before} MB set before)")


_budgets: list[_Budget] = []
"""The ``memory_budget`` blocks the process is in, innermost last."""
_unlifted: _Budget | None = None
"""The block whose end could not restore the budget before it (``_lift_left_over``)."""


def _given() -> _Budget | None:
    """The innermost block whose budget z3 has: the budget in force."""
    return next((budget for budget in reversed(_budgets) if budget.before is not None), None)


def _in_force(z: ModuleType) -> str:
    """z3's budget, in megabytes ("0": none): from crasp's records where crasp set it, else
    as z3 says it (``_set_outside``)."""
    given = _given()
    if given is not None:
        return str(given.megabytes)
    outside = _set_outside(z)
    if outside is None:
        raise CraspError("z3 would not say its memory budget (memory_max_size, set outside "
                         "crasp): it has run out of it")
    return outside


def _set_outside(z: ModuleType) -> str | None:
    """z3's budget where no crasp block set it, as z3 says it ("0": none); None where z3,
    past a budget set outside crasp, cannot say it."""
    try:
        return z.get_param(MEMORY_PARAMETER)
    except z.Z3Exception:
        return None


def _set_budget(z: ModuleType, megabytes: str) -> bool:
    """Whether z3 took the budget ``megabytes``, set and read back (module docstring: both
    can fail past a budget); a failed try is retried after Python frees what it no longer
    uses of z3's terms, which z3 then stops counting."""
    for attempt in range(BUDGET_ATTEMPTS):
        if attempt:
            gc.collect()
        z.set_param(MEMORY_PARAMETER, megabytes)
        try:
            if z.get_param(MEMORY_PARAMETER) == megabytes:
                return True
        except z.Z3Exception:
            pass
    return False


def _lift_left_over(z: ModuleType) -> None:
    """Restores the budget a block's end could not (``_unlifted``), or refuses to go on."""
    global _unlifted
    if not _set_budget(z, _unlifted.before):
        raise CraspError(f"z3 still holds the memory budget of {_unlifted.megabytes:,} MB that "
                         "an earlier question in this process ran out of, and will not lift "
                         "it (z3 keeps counting what it held then); ask in a new process")
    _unlifted = None


@contextmanager
def memory_budget(megabytes: int | None):
    """z3 allocates at most ``megabytes`` while the block runs (None: leave the budget as it
    is, by default none); the budget before is restored after, so a question asked inside
    another (a domain's closure, a vacuity check) runs under the outer budget.

    The budget is given to z3 at the block's first ``z3()``, not on entry: a question that
    needs no solver (``--method enumerate``, a one-token alphabet) runs without importing z3
    (0.15 s and 27 MB of a 0.45 s, 63 MB command)."""
    global _unlifted
    if megabytes is None:
        yield
        return
    if not 1 <= megabytes <= LARGEST_MEMORY_BUDGET:
        raise CraspError(f"the memory budget must be 1 to {LARGEST_MEMORY_BUDGET:,} MB, not "
                         f"{megabytes!r}")
    budget = _Budget(megabytes)
    _budgets.append(budget)
    try:
        yield
    finally:
        _budgets.pop()
        if budget.before is not None:
            lifted = _set_budget(sys.modules["z3"], budget.before)
            # restoring this block's "before" supersedes what an inner block left, if it did
            _unlifted = None if lifted else budget


def _ran_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` is z3's ``out of memory``, or was raised while handling it: z3's
    Python API turns some errors into its own (``Solver.model`` answers any failure with
    ``model is not available``), so the original is then the exception's context."""
    z = sys.modules.get("z3")
    while z is not None and error is not None:
        if isinstance(error, z.Z3Exception) and "out of memory" in str(error.value):
            return True
        error = error.__cause__ or error.__context__
    return False


@contextmanager
def out_of_memory_undecided(doing: str):
    """z3's ``out of memory`` inside the block raised as ``Undecided`` (``doing`` says what
    the search was doing); z3's other errors pass through. It imports nothing: where z3 was
    never imported, nothing in the block can have run out of z3's memory."""
    try:
        yield
    except Exception as error:
        if not _ran_out_of_memory(error):
            raise
        raise _out_of_memory(doing) from None


def _out_of_memory(doing: str) -> Undecided:
    """The ``Undecided`` of z3 running out of memory while ``doing``, naming the budget
    (from crasp's records: z3, out of memory, may fail to say it)."""
    given = _given()
    if given is not None:
        within = f"its budget, --max-memory {given.megabytes} MB"
    else:
        outside = _set_outside(sys.modules["z3"])
        within = ("a budget set outside crasp" if outside is None else
                  "no budget set" if outside == "0" else
                  f"a budget of {outside} MB set outside crasp")
    return Undecided(f"z3 ran out of memory ({within}) while {doing}", out_of_memory=True)


def _memory_reason(reason: str) -> bool:
    """Whether z3's reason for an ``unknown`` is running out of memory: a solver call may
    answer so instead of raising (``out of memory``; its SMT core says ``memout``)."""
    return "memory" in reason or reason == "memout"


Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``: where a search is, for a progress bar."""


class TimeLimit:
    """``seconds`` (None: no limit) for a whole search, from now: every solver call gets what
    is left, and a search that runs no solver (enumeration) asks ``expire`` between batches.
    It goes wherever the search goes, so it also carries ``progress`` (None: none shown),
    which each search's loop tells where it is (``report``)."""

    def __init__(self, seconds: float | None = None, progress: Progress | None = None):
        if seconds is not None and not (0 < seconds < math.inf):   # nan fails both
            raise CraspError(f"the time limit must be a positive, finite number of seconds, "
                             f"not {seconds!r}")
        self.seconds = seconds
        self.deadline = None if seconds is None else time.perf_counter() + seconds
        self.progress = progress

    def report(self, stage: str, done: int, total: int) -> None:
        """The search is at ``done`` of ``total`` in ``stage`` (for ``progress``)."""
        if self.progress is not None:
            self.progress(stage, done, total)

    def _left(self) -> float | None:
        return None if self.deadline is None else self.deadline - time.perf_counter()

    def _ran_out(self, doing: str) -> Undecided:
        return Undecided(f"the time limit (--timeout {self.seconds:g} s) ran out while {doing}",
                         timed_out=True)

    def share(self, seconds: float) -> float:
        """The time a part of the search may take: ``seconds``, at most what is left (a
        millisecond when nothing is)."""
        left = self._left()
        return seconds if left is None else max(min(seconds, left), 0.001)

    def expire(self, doing: str) -> None:
        """``Undecided`` if the limit has run out (``doing`` says what the search was doing)."""
        if self._spent():
            raise self._ran_out(doing)

    def check(self, solver, what: str, *assumptions, effort: int | None = None):
        """``solver.check(*assumptions)``: ``z3.sat`` or ``z3.unsat``, never ``unknown``
        (``Undecided`` instead, with z3's reason and ``what`` the call was deciding).

        ``effort``, for a call whose answer only helps (a lemma): at most that many of z3's
        resource units (its ``rlimit``, counted by the same steps on every machine, so the
        outcome does not depend on the machine's speed), and None where they run out; the
        time limit still answers ``Undecided``."""
        z = z3()
        self._give_time(solver, what)
        if effort is not None:
            solver.set("rlimit", effort)
        try:
            with out_of_memory_undecided(f"deciding {what}"):
                verdict = solver.check(*assumptions)
            reason = solver.reason_unknown() if verdict == z.unknown else None
        finally:
            if effort is not None:
                solver.set("rlimit", 0)   # 0: no limit for the solver's later calls
        if verdict == z.unknown and _memory_reason(reason):
            raise _out_of_memory(f"deciding {what}")
        if verdict == z.unknown:
            # z3 names a spent rlimit "max. resource limit exceeded" or, inside some of its
            # tactics, "canceled", as it does a spent timeout: the clock tells them apart
            if effort is not None and not self._spent() and (
                    "resource limit" in reason or reason == "canceled"):
                return None
            if self.deadline is not None and reason in ("timeout", "canceled"):
                raise self._ran_out(f"z3 was deciding {what}")
            raise Undecided(f"z3 could not decide {what} ({reason})")
        return verdict

    def _spent(self) -> bool:
        left = self._left()
        return left is not None and left <= 0

    def _give_time(self, solver, what: str) -> None:
        left = self._left()
        if left is not None:
            milliseconds = int(left * 1000)
            if milliseconds < 1:   # z3 reads a timeout of 0 as "no limit"
                raise self._ran_out(f"z3 was deciding {what}")
            solver.set("timeout", milliseconds)


UNLIMITED = TimeLimit()
"""No time limit (the default of every search)."""
