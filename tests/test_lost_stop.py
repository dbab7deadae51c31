"""A Ctrl-C or SIGTERM whose KeyboardInterrupt Python drops still stops a sweep.

Python runs a signal handler in whatever Python code the main thread executes next; when that
is a ``__del__`` or a garbage-collector callback, the handler's exception is printed and
dropped. The sweep's guard records the stop before raising, and the sweep looks at it between
cells and while it waits on workers (``SignalGuard.raise_if_stopped``).
"""

from __future__ import annotations

import json
import signal
import sys

import pytest

from crasp.train.signals import SignalGuard
from crasp.train.sweep import SweepSpec, enumerate_cells, run_sweep
from test_sweep_fakes import FakeConfig, fake_resolve, fake_train


class _SignalsInItsFinalizer:
    """Sends ``signum`` to this process from ``__del__``: the handler runs there, and Python
    drops whatever it raises (``sys.unraisablehook``)."""

    def __init__(self, signum: int):
        self.signum = signum

    def __del__(self):
        signal.raise_signal(self.signum)


def _lose_a_stop(signum: int) -> None:
    _SignalsInItsFinalizer(signum)   # no reference kept: finalized at once


@pytest.fixture
def dropped(monkeypatch):
    """The exceptions Python dropped, in order."""
    seen: list[type] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: seen.append(info.exc_type))
    return seen


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_the_guard_keeps_a_stop_whose_exception_was_dropped(signum, dropped):
    with SignalGuard(interrupt=True) as guard:
        guard.raise_if_stopped()   # nothing asked yet
        _lose_a_stop(signum)
        assert dropped == [KeyboardInterrupt] and guard.stop and guard.signal == signum
        with pytest.raises(KeyboardInterrupt):
            guard.raise_if_stopped()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_training_guard_still_stops_once_without_raising(signum, dropped):
    with SignalGuard() as guard:
        _lose_a_stop(signum)
        assert dropped == [] and guard.stop   # the first stop never raises: nothing to lose


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_sweep_stops_after_a_dropped_stop(jobs, signum, dropped, tmp_path, monkeypatch):
    """The first cell fails at once; its failure message is echoed in the sweep's main thread,
    where the stop is sent and its exception dropped. The cells after it sleep 2 s each: the
    sweep must stop instead of running them (the old guard ran all six)."""
    monkeypatch.setenv("FAKE_FAIL", "L3")
    monkeypatch.setenv("FAKE_SLEEP", "2")
    cells = enumerate_cells(SweepSpec(depths=[1], languages=["L3", "L4"], posencs=["nope"],
                                      seeds=[0, 1, 2], grid={}),
                            resolve=fake_resolve, config_cls=FakeConfig)
    assert [cell.language for cell in cells][:1] == ["L3"]
    echoed: list[str] = []

    def echo(text: str) -> None:
        if not echoed:
            _lose_a_stop(signum)
        echoed.append(text)

    with pytest.raises(KeyboardInterrupt):
        run_sweep(cells, tmp_path, jobs=jobs, train_fn=fake_train, progress=False, echo=echo)
    assert dropped == [KeyboardInterrupt]
    finished = list(tmp_path.glob("cells/*/results.json"))
    assert len(finished) < 3, finished   # the old guard finished all three L4 cells
    session = json.loads(next((tmp_path / "sessions").glob("*.json")).read_text())
    assert session["interrupted"] is True
    assert signal.getsignal(signum) in (signal.default_int_handler, signal.SIG_DFL)
