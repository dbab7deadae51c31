"""Sweeps: a grid of independent training runs (depth x language x encoding x seed x grid).

A sweep directory looks like this::

    DIR/sweep.json                 the sweep specs (grid, preset, command, cell ids); atomic
    DIR/cells/<id>/cell.json       what the cell is: index, overrides, resolved config; atomic
    DIR/cells/<id>/results.json    written by the trainer when the run ends: the cell is done
    DIR/cells/<id>/error.txt       the traceback of a cell that raised (retried on the next run)
    DIR/cells/<id>/trials/<i>/     --split-trials: configuration i of the cell's search, run
                                   alone; the parts are assembled into the cell (search_parts)
    DIR/sessions/<stamp>.json      one file per ``crasp sweep`` invocation: command, wall time

Cells are enumerated in a fixed order (encoding, language, depth, grid point, seed; each in
the order given on the command line) and numbered from 0. A cell's id is readable and stable:
``<language>-d<depth>-<posenc>-s<seed>-<hash>``, where the hash is the first 10 hex digits of
the SHA-256 of the cell's resolved training config (canonical JSON). So the same cell has the
same directory in every shard and in every re-run, and a change to the resolved config (a new
preset value, a new trainer default) makes a new cell rather than silently reusing an old one.

A cell is done iff ``results.json`` exists in its directory (the trainer writes it atomically,
last). Re-running the same command skips done cells and resumes the others from the trainer's
checkpoints, so a killed sweep loses at most the epochs in flight. ``--shard i/n`` takes the
cells whose index satisfies ``index % n == i``: the shards of one sweep partition its cells.

``--search`` makes every cell a per-cell hyperparameter search (the paper's protocol): the
cell's config carries the trainer's ``search`` list, so one run tries the configurations in
order, ends at the first that reaches 100% validation exact match, else keeps the best on
validation, and its results.json records every trial and the one chosen (``selected``,
``best_trial``). The search is part of the cell's config, hence of its id, and of its setting
(``hyper["search"]``), so searched and unsearched runs of one coordinate never mix; a search
cell resumes mid-trial like any run, and shards as any cell does.

Workers are ``spawn``-ed processes with one thread each (``OMP_NUM_THREADS=1`` and
``torch.set_num_threads(1)``): on a small CPU, two one-thread processes train about twice as
fast as one two-thread process. Workers ignore SIGINT; the parent turns Ctrl-C (or SIGTERM,
which Slurm sends on preemption or time-out) into terminating its workers, so results already
written stay, and in-flight cells resume from their last checkpoint.

The pipeline, one module per pass: ``axes`` (the options' text -> values), ``cells`` (a spec ->
cells with configs and ids), ``directory`` (the sweep directory's records), ``pool`` (cells ->
finished runs in worker processes), ``lock`` (one sweep process per directory and shard);
``cli`` is ``crasp sweep``.
"""

from crasp.train.results import RESULTS_FILE, parse_bin
from crasp.train.field_text import parse_value
from crasp.train.sweep.axes import (
    AXES, PAPER_SEARCH, parse_grid, parse_int_range, parse_languages, parse_names, parse_search,
    parse_seeds, parse_shard,
)
from crasp.train.sweep.cells import (
    Cell, SweepSpec, canonical_json, cell_id, check_languages, config_dict, config_hash,
    default_resolver, enumerate_cells, shard_cells,
)
from crasp.train.sweep.directory import (
    CELL_FILE, CELLS_DIR, ERROR_FILE, SESSIONS_DIR, SWEEP_FILE, cell_dir,
    epochs_reached, is_done, read_json, record_spec, sweep_status, unfinished_note,
    write_json_atomic,
)
from crasp.train.sweep.pool import SweepOutcome, run_cell, run_sweep

__all__ = [
    "AXES", "PAPER_SEARCH", "CELL_FILE", "CELLS_DIR", "Cell", "ERROR_FILE", "RESULTS_FILE",
    "SESSIONS_DIR", "SWEEP_FILE", "SweepOutcome", "SweepSpec", "canonical_json", "cell_dir",
    "cell_id", "check_languages", "config_dict", "config_hash", "default_resolver",
    "enumerate_cells", "epochs_reached", "is_done", "parse_bin", "parse_grid", "parse_int_range",
    "parse_languages", "parse_names", "parse_search", "parse_seeds", "parse_shard", "parse_value",
    "read_json", "record_spec", "run_cell", "run_sweep", "shard_cells", "sweep_status",
    "unfinished_note", "write_json_atomic"
]
