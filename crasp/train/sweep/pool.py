"""Sweep pass 4: the cells still to run -> finished runs, ``jobs`` worker processes at a time.

Workers are ``spawn``-ed processes with one thread each; they ignore SIGINT and die with their
parent (``crasp.train.sweep.lock.watch_parent``); the parent turns Ctrl-C or SIGTERM into
terminating them through the one signal guard, ``crasp.train.signals.SignalGuard``.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import signal
import socket
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from crasp.util.atomic import write_text_atomic
from crasp.errors import CraspError, in_words
from crasp.util.progress import progress_bar
from crasp.train.results import RESULTS_FILE, RunResults
from crasp.train.config import TrainConfig
from crasp.train.search_parts import assemble, trial_dir, trial_needed, trials_to_run
from crasp.train.signals import SignalGuard
from crasp.train.sweep.cells import Cell, jsonable, slug
from crasp.train.sweep.directory import (
    CELL_FILE, ERROR_FILE, SESSIONS_DIR, cell_dir, error_reason, is_done, utc_now,
    write_json_atomic,
)
from crasp.train.sweep.lock import watch_parent

TrainFn = Callable[..., dict]
POLL_S = 1.0   # how often a parent waiting on workers looks for a stop whose exception was lost


def _init_worker(parent_pid: int) -> None:
    """Runs first in each spawned worker: die with the parent, ignore Ctrl-C (the parent
    handles it), one thread."""
    watch_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ["OMP_NUM_THREADS"] = "1"
    os.environ["MKL_NUM_THREADS"] = "1"
    import torch  # here, not at the top: the parent needs no torch to schedule cells

    torch.set_num_threads(1)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already set, or parallel work already started
        pass


def run_cell(train_fn: TrainFn | None, config: Any, run_dir: str,
             trial: int | None = None) -> tuple[str, Any]:
    """Train one cell (in a worker or inline), or with ``trial`` that trial of its search alone
    in its ``trials/<i>`` folder (``crasp.train.search_parts``). Returns ("ok", results),
    ("error", text), or ("skipped", None) for a trial after one that succeeded. The text (also
    the cell's error.txt) is the message a person gets for a ``CraspError`` or an ``OSError``
    (a damaged run file, a place that cannot be written), a traceback for anything else."""
    cell_path = Path(run_dir)
    run_path = cell_path if trial is None else trial_dir(cell_path, trial)
    try:
        if trial is not None and not trial_needed(cell_path, trial):
            return "skipped", None
        if train_fn is None:
            from crasp.train.loop import train as train_fn
        part = {} if trial is None else {"only_trial": trial}
        results = train_fn(config, run_path, progress=False, resume=True, **part)
    except Exception as error:  # one broken cell must not stop the sweep; it is retried next time
        text = in_words(error) if isinstance(error, (CraspError, OSError)) else \
            traceback.format_exc()
        if trial is not None:
            text = f"trial {trial} of the search ({run_path}):\n{text}"
        write_text_atomic(cell_path / ERROR_FILE, text.rstrip("\n") + "\n")
        return "error", text
    if trial is not None:
        return "ok", None   # the cell is done when its parts are assembled (the caller's job)
    (run_path / ERROR_FILE).unlink(missing_ok=True)
    if not isinstance(results, Mapping):
        results = RunResults.read(run_path).to_json() if (run_path / RESULTS_FILE).is_file() else {}
    return "ok", jsonable(results)


@dataclass
class SweepOutcome:
    total: int          # cells in this shard
    already_done: int   # done before this invocation
    ran: int            # finished by this invocation
    failed: list[str]   # ids of cells that raised
    interrupted: bool = False
    elapsed_s: float = 0.0
    successes: int = 0  # done cells whose results say "success"
    parts: int = 0      # --split-trials: trial parts finished by this invocation


class _OneThreadEnvironment:
    """``OMP_NUM_THREADS=1`` (and friends) in ``os.environ`` while spawning workers."""

    NAMES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")

    def __enter__(self):
        self.saved = {name: os.environ.get(name) for name in self.NAMES}
        for name in self.NAMES:
            os.environ[name] = "1"
        return self

    def __exit__(self, *exc):
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        return False


def _terminate(executor: concurrent.futures.ProcessPoolExecutor) -> None:
    processes = list((getattr(executor, "_processes", None) or {}).values())
    executor.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout=10)
        if process.is_alive():
            process.kill()
            process.join(timeout=5)


def run_sweep(cells: Sequence[Cell], out_dir: str | Path, *, jobs: int = 1,
              train_fn: TrainFn | None = None, progress: bool = True,
              command: str | None = None, shard: tuple[int, int] = (0, 1),
              echo: Callable[[str], None] | None = None,
              split_trials: bool = False,
              trials: Sequence[int] | None = None) -> SweepOutcome:
    """Run every cell of ``cells`` that is not done yet, ``jobs`` at a time.

    ``cells`` is normally one shard of ``enumerate_cells``. ``train_fn`` defaults to the
    trainer's ``train``; with ``jobs > 1`` it must be picklable (a module-level function).
    With ``jobs == 1`` cells run in this process, in order. A ``KeyboardInterrupt`` (or SIGTERM)
    stops the workers and is re-raised after the session file is written. ``crasp sweep``
    holds the directory's lock (``crasp.train.sweep.lock``) around this call.

    ``split_trials`` runs each trial of a search cell as a part of its own (in its
    ``trials/<i>`` folder; ``crasp.train.search_parts``), so the trials of one cell train side
    by side and each finished trial is kept; the cell is done when its parts are assembled.
    Parts are submitted in order; one that starts after an earlier trial of its cell succeeded
    is skipped, one already running finishes and is left out of the assembly. ``trials``
    limits the parts run now to those trials (a cell whose search needs others stays pending).
    """
    out = Path(out_dir)
    started = time.time()
    session_path = out / SESSIONS_DIR / (
        time.strftime("%Y%m%dT%H%M%S") + f"-{slug(socket.gethostname())}-{os.getpid()}.json")
    session = {"command": command, "shard": f"{shard[0]}/{shard[1]}", "jobs": jobs,
               "host": socket.gethostname(), "started": utc_now(), "finished": None,
               "elapsed_s": None, "cells": len(cells), "ran": 0, "failed": [],
               "interrupted": False}
    write_json_atomic(session_path, session)

    done = [cell for cell in cells if is_done(out, cell)]
    pending = [cell for cell in cells if not is_done(out, cell)]
    successes = 0
    for cell in done:
        try:
            successes += RunResults.read(cell_dir(out, cell)).success
        except CraspError:  # unreadable: counted as done (it has results.json), not as a success
            pass
    outcome = SweepOutcome(total=len(cells), already_done=len(done), ran=0, failed=[],
                           successes=successes)
    for cell in pending:
        write_json_atomic(cell_dir(out, cell) / CELL_FILE, cell.record())

    bar = _progress_bar(len(cells), len(done), progress)
    last = {"text": ""}

    def finished(cell: Cell, status: str, payload: Any) -> None:
        if status == "ok":
            outcome.ran += 1
            results = RunResults.from_json(payload)
            outcome.successes += bool(results.success)
            em = results.long_exact_match
            last["text"] = f"{cell.language} d{cell.depth} {cell.posenc} s{cell.seed}: " + (
                f"{em:.2f}" if em is not None else "?")
        else:
            outcome.failed.append(cell.id)
            last["text"] = f"{cell.language} d{cell.depth} {cell.posenc} s{cell.seed}: ERROR"
            if echo:
                echo(f"cell {cell.id} failed: {error_reason(str(payload))} (all of it in "
                     f"{cell_dir(out, cell) / ERROR_FILE})")
        if bar is not None:
            bar.set_postfix_str(f"ok={outcome.successes} fail={len(outcome.failed)} "
                                f"last={last['text']}", refresh=False)
            bar.update(1)

    reported: set[str] = set()

    def failed_here(cell: Cell, doing: str, error: CraspError | OSError) -> None:
        """A cell whose parts this process could not read or assemble (a damaged part's
        results.json): failed like a cell whose training raised, the sweep goes on."""
        text = f"{doing} ({cell_dir(out, cell)}):\n{in_words(error)}\n"
        write_text_atomic(cell_dir(out, cell) / ERROR_FILE, text)
        reported.add(cell.id)
        finished(cell, "error", text)

    def unit_finished(cell: Cell, trial: int | None, status: str, payload: Any) -> None:
        outcome.parts += trial is not None and status == "ok"
        if cell.id in reported:
            return
        if trial is not None and status != "error":
            try:
                results = assemble(cell_dir(out, cell), _train_config(cell))
            except (CraspError, OSError) as error:
                return failed_here(cell, "assembling the search from its parts", error)
            if results is None:
                return
            (cell_dir(out, cell) / ERROR_FILE).unlink(missing_ok=True)
            status, payload = "ok", results.to_json()
        reported.add(cell.id)
        finished(cell, status, payload)

    units = []
    for cell in pending:
        try:
            todo = _trials_to_run(out, cell) if split_trials else None
        except (CraspError, OSError) as error:
            failed_here(cell, "reading the search's finished parts", error)
            continue
        if todo == []:  # every part finished in an earlier session: assemble them now
            unit_finished(cell, 0, "skipped", None)
        units += [(cell, None)] if todo is None else [
            (cell, trial) for trial in todo if trials is None or trial in trials]
    try:
        with SignalGuard(interrupt=True) as guard:
            if jobs <= 1 or len(units) <= 1:
                for cell, trial in units:
                    guard.raise_if_stopped()
                    if cell.id in reported:
                        continue
                    try:
                        status, payload = run_cell(train_fn, _config_for(cell),
                                                   str(cell_dir(out, cell)), trial)
                    except KeyboardInterrupt:
                        if trial is None and is_done(out, cell):  # the stop came as the cell
                            finished(cell, "ok",                 # wrote its results
                                     RunResults.read(cell_dir(out, cell)).to_json())
                        raise
                    unit_finished(cell, trial, status, payload)
                guard.raise_if_stopped()
            else:
                _run_pool(units, out, jobs, train_fn, unit_finished, guard.raise_if_stopped)
    except KeyboardInterrupt:
        outcome.interrupted = True
        raise
    finally:
        if bar is not None:
            bar.close()
        outcome.elapsed_s = time.time() - started
        session.update(finished=utc_now(), elapsed_s=round(outcome.elapsed_s, 3), ran=outcome.ran,
                       failed=outcome.failed, interrupted=outcome.interrupted)
        write_json_atomic(session_path, session)
    return outcome


def _config_for(cell: Cell) -> Any:
    return cell.config_object if cell.config_object is not None else cell.config


def _train_config(cell: Cell) -> TrainConfig:
    config = _config_for(cell)
    return config if isinstance(config, TrainConfig) else TrainConfig.from_dict(dict(config))


def _trials_to_run(out: Path, cell: Cell) -> list[int] | None:
    """The parts of a search cell still to run; None for a cell that is not a search of
    several configurations (it runs whole)."""
    count = len(cell.config.get("search") or ())
    return trials_to_run(cell_dir(out, cell), count) if count > 1 else None


def _run_pool(units: Sequence[tuple[Cell, int | None]], out: Path, jobs: int,
              train_fn: TrainFn | None,
              finished: Callable[[Cell, int | None, str, Any], None],
              raise_if_stopped: Callable[[], None]) -> None:
    """Run ``units`` in ``jobs`` worker processes, calling ``finished`` in submission order
    among those that end together. The wait wakes every ``POLL_S`` seconds to call
    ``raise_if_stopped``: a Ctrl-C whose exception was dropped (``SignalGuard``) stops the
    sweep within that time, not when the next cell ends hours later."""
    context = multiprocessing.get_context("spawn")
    with _OneThreadEnvironment():  # workers are spawned on submit and inherit os.environ
        executor = concurrent.futures.ProcessPoolExecutor(
            max_workers=min(jobs, len(units)), mp_context=context, initializer=_init_worker,
            initargs=(os.getpid(),))
        try:
            futures = {executor.submit(run_cell, train_fn, _config_for(cell),
                                       str(cell_dir(out, cell)), trial): (cell, trial)
                       for cell, trial in units}
        except BaseException:
            _terminate(executor)
            raise
    order = {future: index for index, future in enumerate(futures)}
    remaining = set(futures)
    try:
        while remaining:
            raise_if_stopped()
            done, remaining = concurrent.futures.wait(
                remaining, timeout=POLL_S, return_when=concurrent.futures.FIRST_COMPLETED)
            for future in sorted(done, key=order.__getitem__):
                _finish_unit(future, futures[future], out, finished)
        raise_if_stopped()
    except BaseException:
        _terminate(executor)
        raise
    executor.shutdown(wait=True)


def _finish_unit(future: concurrent.futures.Future, unit: tuple[Cell, int | None], out: Path,
                 finished: Callable[[Cell, int | None, str, Any], None]) -> None:
    cell, trial = unit
    try:
        status, payload = future.result()
    except concurrent.futures.process.BrokenProcessPool:
        raise CraspError("a sweep worker died (killed for memory?); finished cells are "
                         "kept: run the same command again to resume") from None
    except Exception:  # e.g. unpicklable results
        status, payload = "error", traceback.format_exc()
        write_text_atomic(cell_dir(out, cell) / ERROR_FILE, payload)
    finished(cell, trial, status, payload)


def _progress_bar(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    return progress_bar(total=total, initial=initial, desc="sweep", unit="cell", smoothing=0.1)
