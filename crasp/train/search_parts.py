"""A search run as independent one-trial runs, and their assembly into the search's own result.

A search (``TrainConfig.search``, the paper's protocol) tries its configurations in order and
stops at the first that reaches 100% validation exact match. Run as one process it takes the
sum of its trials' times, and a trial cut off by the end of a session (or of a lent machine)
is lost with that machine. Run as parts, its trials can train side by side, in separate
sessions, and each finished trial is a result of its own that can be committed.

Derivation (why the parts give the search's result exactly). In ``crasp.train.loop`` a trial
shares nothing with the trials before it but the data: it re-seeds torch with the config's
seed before building the model (so weights and dropout start alike), draws its batch order
from ``(seed, trial, epoch)``, and builds a fresh optimizer and schedule; the data depend only
on fields a search may not vary (``crasp.train.config.SEARCHABLE``). So trial ``i`` run alone
(``train(..., only_trial=i)``) computes, bit for bit on one device and thread count, what it
computes inside the whole search; only timings differ. The search's result is then a function
of its trials' results:

- *ran*: trials ``0..j`` where ``j`` is the first trial whose validation is perfect (the search
  stops there), or every trial when none is; trials after ``j`` are not part of the search,
  even when a part ran them (parts may start before ``j`` is known);
- *selected*: the trial of *ran* with the greatest (validation exact match, then token
  accuracy), the earliest on a tie: the loop replaces its best only on a strictly greater key,
  and these fractions share one denominator per cell, so they order as the loop's counts do;
- its test bins, validation scores, epochs, best epoch, stop reason, size and best weights are
  the search's: the loop's ``finish`` evaluates the best weights over all trials, which are
  the selected trial's best;
- ``trials`` and ``improvements`` are *ran*'s, concatenated in trial order; ``total_epochs``
  and ``train_time_s`` are summed over *ran* (compute, not wall time: parts may overlap).

Layout: ``RUN/trials/<i>/`` is trial ``i``'s run directory. ``assemble`` writes into ``RUN``
what a whole-search run leaves there: ``config.json``, ``metrics.jsonl`` (*ran*'s epochs, each
part's ``elapsed_s`` counted from its own start), ``best.safetensors`` and ``last.safetensors``,
the fixed-precision model directory where the selected part has one, and ``results.json`` last,
with ``assembled_from`` naming the parts. Parts restored from committed records (which keep
only the small files: config, results, metrics) assemble into a cell with no weights, like the
records' other cells; their results are the same.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from crasp.errors import CraspError
from crasp.train import run as files
from crasp.train.config import TrainConfig
from crasp.train.results import RESULTS_FILE, RunResults
from crasp.util.atomic import write_bytes_atomic, write_text_atomic
from crasp.util.json_shape import ANY, FINITE, INTEGER, ListOf, Object, mismatch

TRIALS_DIR = "trials"
_PART_FIELDS = {"epochs": INTEGER, "val_exact_match": FINITE, "val_token_accuracy": FINITE,
                "trials": ListOf(ANY)}
PART_SHAPE = Object(_PART_FIELDS, required=frozenset(_PART_FIELDS))
"""What a finished part's results hold beyond ``RESULTS_SHAPE`` (which lets them be null): the
fields ``select`` and ``assemble`` compute with, as the trainer writes them."""


def trial_dir(run_dir: str | Path, trial: int) -> Path:
    return Path(run_dir) / TRIALS_DIR / str(trial)


def finished_part(run_dir: Path, trial: int) -> RunResults | None:
    """Trial ``trial``'s results when that part finished in ``run_dir``, else None; a
    ``CraspError`` when the results there are not of that trial run alone."""
    path = trial_dir(run_dir, trial)
    if not (path / RESULTS_FILE).is_file():
        return None
    results = RunResults.read(path)
    if results.search_trial != trial:
        raise CraspError(f"{path / RESULTS_FILE} is not the run of trial {trial} alone "
                         f"(search_trial: {results.search_trial!r})")
    problem = mismatch(results.to_json(), PART_SHAPE)
    if problem:
        raise CraspError(f"{path / RESULTS_FILE} is not a finished part of a search ({problem})")
    return results


def trials_to_run(run_dir: str | Path, n_trials: int) -> list[int]:
    """The trials of an ``n_trials`` search in ``run_dir`` that are not done and still part of
    the search: none after a finished trial that succeeded."""
    todo = []
    for trial in range(n_trials):
        part = finished_part(Path(run_dir), trial)
        if part is None:
            todo.append(trial)
        elif part.success:
            break
    return todo


def trial_needed(run_dir: str | Path, trial: int) -> bool:
    """False once a trial before ``trial`` finished with success (the search stopped there)."""
    return all(not (part := finished_part(Path(run_dir), earlier)) or not part.success
               for earlier in range(trial))


def ran_trials(parts: list[RunResults | None]) -> list[RunResults] | None:
    """*ran* (module docstring) from the parts in trial order (None: not finished); None
    while a trial of it is unfinished."""
    ran = []
    for part in parts:
        if part is None:
            return None
        ran.append(part)
        if part.success:
            break
    return ran


def select(ran: list[RunResults]) -> RunResults:
    """The selected trial: the greatest validation key, the earliest on a tie."""
    best = ran[0]
    for part in ran[1:]:
        if (part.val_exact_match, part.val_token_accuracy) > (best.val_exact_match,
                                                             best.val_token_accuracy):
            best = part
    return best


def assemble(run_dir: str | Path, search: TrainConfig) -> RunResults | None:
    """Write the search's result into ``run_dir`` from its parts, once every trial it ran is
    finished (None before). ``search`` is the config every part ran."""
    run_dir = Path(run_dir)
    # the config as the trainer records it: normalized, and read back from JSON
    config = json.loads(json.dumps(search.normalized().validate().to_dict()))
    n_trials = len(config.get("search") or ())
    if n_trials < 1:
        raise CraspError(f"{run_dir}: the config has no search to assemble")
    ran = ran_trials([finished_part(run_dir, trial) for trial in range(n_trials)])
    if ran is None:
        return None
    for part in ran:
        if part.config != config:
            raise CraspError(f"{trial_dir(run_dir, part.search_trial)} ran another config "
                             f"than the search in {run_dir}")
    chosen = select(ran)
    chosen_dir = trial_dir(run_dir, chosen.search_trial)
    files.write_json(run_dir / files.CONFIG_FILE, config)
    metrics = [trial_dir(run_dir, part.search_trial) / files.METRICS_FILE for part in ran]
    write_text_atomic(run_dir / files.METRICS_FILE, "".join(
        path.read_text(encoding="utf-8") for path in metrics if path.is_file()))
    _copy(chosen_dir / files.BEST_FILE, run_dir / files.BEST_FILE)
    _copy(trial_dir(run_dir, ran[-1].search_trial) / files.LAST_FILE, run_dir / files.LAST_FILE)
    _copy_format_model(chosen_dir, run_dir)
    (run_dir / files.STATE_FILE).unlink(missing_ok=True)  # a whole-search run's, superseded
    train_time = sum(part.train_time_s or 0.0 for part in ran)
    results = RunResults(**{
        **{name: getattr(chosen, name) for name in _TAKEN_FROM_SELECTED},
        "total_epochs": sum(part.epochs for part in ran),
        "trials": [summary for part in ran for summary in part.trials],
        "improvements": [record for part in ran for record in part.improvements or []],
        "train_time_s": train_time,
        "wall_time_s": train_time + (chosen.eval_time_s or 0.0),
        "assembled_from": [f"{TRIALS_DIR}/{part.search_trial}" for part in ran],
    })
    results.write(run_dir)
    return results


_TAKEN_FROM_SELECTED = ("bins", "val_exact_match", "val_token_accuracy", "val_n", "success",
                        "epochs", "best_epoch", "stopped", "best_trial", "selected",
                        "eval_time_s", "n_params", "language", "data", "environment", "config")


def _copy(source: Path, target: Path) -> None:
    if source.is_file():
        write_bytes_atomic(target, source.read_bytes())


def _copy_format_model(source_run: Path, target_run: Path) -> None:
    """The selected part's fixed-precision model into ``target_run``, written as the trainer
    writes one (``replace_directory`` with ``force``: atomically, replacing only a format model
    crasp wrote there; a folder of that name holding anything else is refused and kept)."""
    source = source_run / files.FORMAT_MODEL_DIR
    if not source.is_dir():
        return
    from crasp.util.outputs import COMPILED_MODEL, replace_directory

    replace_directory(target_run / files.FORMAT_MODEL_DIR, COMPILED_MODEL, force=True,
                      write=lambda staging: shutil.copytree(source, staging,
                                                            dirs_exist_ok=True))
