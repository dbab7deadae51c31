"""``crasp sweep`` (registered lazily by ``crasp.cli``): the sweep pipeline behind one command."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from crasp.errors import CraspError
from crasp.util.outputs import SWEEP, claim_updatable
from crasp.train.sweep.axes import PAPER_SEARCH
from crasp.train.sweep.lock import SweepLock, running_sweeps
from crasp.util.progress import progress_option, wants_progress


def _command_line(depths, languages, posenc, seeds, grid_entries, preset, jobs, out_dir,
                  shard, search_text=None, split_trials=False, trials=None) -> str:
    """The sweep as one normalized ``crasp sweep`` command (recorded in sweep.json)."""
    words = ["crasp", "sweep", "--depths", depths, "--languages", languages, "--posenc", posenc,
             "--seeds", seeds]
    if grid_entries:
        words += ["--grid", *grid_entries]
    if preset != "default":
        words += ["--preset", preset]
    if search_text:
        words += ["--search", search_text]
    if split_trials:
        words += ["--split-trials"]
    if trials:
        words += ["--trials", trials]
    words += ["--jobs", str(jobs), "-o", str(out_dir)]
    if shard != "0/1":
        words += ["--shard", shard]
    return shlex.join(words)


def _axes(spec) -> str:
    """The axes as parsed, for the header: ``--seeds 2`` is two seeds (0 and 1), not seed 2,
    and the header shows which (the sixth lease of docs/results/third-edition ran the wrong
    cell on that reading)."""
    def listed(values) -> str:
        return ", ".join(map(str, values))
    return (f"languages {listed(spec.languages)}; depths {listed(spec.depths)}; "
            f"{listed(spec.posencs)}; seeds {listed(spec.seeds)}")


@click.command("sweep", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("grid_args", nargs=-1, metavar="[KEY=VALUES]...")
@click.option("--depths", required=True, help="Depths: 1:6 (inclusive), 1,2,4, or a mix.")
@click.option("--languages", required=True,
              help="Languages: L3:L8, E3:E6, comma lists such as L3,E4,dyck1, or a mix.")
@click.option("--posenc", default="nope", show_default=True,
              help="Positional encodings, comma-separated: nope,rope,alibi.")
@click.option("--seeds", default="1", show_default=True,
              help="N (a count: seeds 0..N-1), a range 5:7, a list 0,4, or one seed as "
                   "5, or 5:5.")
@click.option("--grid", "grid", multiple=True, metavar="KEY=V1,V2",
              help="Training config field and the values to try (repeatable; bare KEY=VALUES "
                   "arguments after it are grid entries too). The grid is the product.")
@click.option("--preset", default="default", show_default=True,
              help="Trainer preset the cells start from.")
@click.option("--search", "search", multiple=True, metavar="paper|KEY=V1,V2...",
              help="Per-cell hyperparameter search with the paper's selection rule: each cell "
                   "tries the configurations in order (the product of the KEY=VALUES items, "
                   "first key outermost), stops at the first that reaches 100% validation exact "
                   "match, else keeps the best on validation. 'paper' is the paper's: "
                   f"{PAPER_SEARCH}.")
@click.option("--split-trials", is_flag=True,
              help="Run each configuration of a --search cell as a part of its own (in "
                   "DIR/cells/<id>/trials/<i>/), so one cell's configurations train side by "
                   "side and each finished one is kept; the parts are assembled into exactly "
                   "the result the whole search gives (the same selected configuration, scores "
                   "and weights).")
@click.option("--trials", "trial_text", metavar="I,J|I:J",
              help="With --split-trials: run only these configurations of each search now "
                   "(0-based, in --search order; e.g. the small ones on a CPU, the large ones "
                   "later on a GPU). A cell is done once the trials its search needs are.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (one thread each).")
@click.option("--out", "-o", "out_dir", required=True, type=click.Path(file_okay=False),
              help="Sweep directory (created; re-using it resumes).")
@click.option("--shard", default="0/1", show_default=True,
              help="Run only cells with index % n == i (0-based i/n), e.g. a Slurm array task.")
@click.option("--dry-run", is_flag=True,
              help="List the cells (index, id, done or how far it got, description) and "
                   "exit, writing nothing.")
@progress_option
def sweep_command(grid_args, depths, languages, posenc, seeds, grid, preset, search,
                  split_trials, trial_text, jobs, out_dir, shard, dry_run, progress):
    """Train every cell of a grid (depth x language x encoding x seed x --grid), resumably.

    \b
      crasp sweep --depths 1:6 --languages L3:L8 --posenc nope,rope,alibi --seeds 3 \\
          --grid lr=1e-3,3e-4 d_model=64,128 --jobs 2 -o runs/sweep
      crasp report runs/sweep
      crasp sweep --depths 3:6 --languages L6 --preset one-head --seeds 5 \\
          --search "d_model=64,256 lr=1e-3,3e-4,1e-4 epochs=25" -o runs/search

    Each cell trains in DIR/cells/<id>/; a cell is done when its results.json exists. Run the
    same command again to resume: done cells are skipped, interrupted ones continue from their
    checkpoint; --dry-run shows how far each unfinished cell got and which process runs the
    directory now. Exit status 1 when a cell failed (why in its error.txt).
    """
    from crasp.train import sweep

    resolve, config_cls = sweep.default_resolver()
    grid_values = sweep.parse_grid(list(grid) + list(grid_args), config_cls)
    searched = sweep.parse_search(search, config_cls)
    configurations, search_text = searched if searched else (None, None)
    if split_trials and not configurations:
        raise CraspError("--split-trials splits a --search into its configurations: give "
                         "--search too")
    trials = None
    if trial_text is not None:
        if not split_trials:
            raise CraspError("--trials picks configurations of a split search: give "
                             "--split-trials too")
        trials = sweep.parse_int_range(trial_text, "--trials")
        outside = [t for t in trials if not 0 <= t < len(configurations)]
        if outside:
            raise CraspError(f"--trials: the search has configurations 0 to "
                             f"{len(configurations) - 1}, not {', '.join(map(str, outside))}")
    both = sorted(set(grid_values) & {key for entry in configurations or [] for key in entry})
    if both:
        raise CraspError(f"--grid and --search both set {', '.join(both)}: give each field in "
                         "one of them")
    spec = sweep.SweepSpec(
        depths=sweep.parse_int_range(depths, "--depths"),
        languages=sweep.parse_languages(languages),
        posencs=sweep.parse_names(posenc, "--posenc"),
        seeds=sweep.parse_seeds(seeds),
        grid=grid_values, preset=preset, search=configurations, search_text=search_text)
    if min(spec.depths) < 1:
        raise CraspError("--depths: depths start at 1")
    sweep.check_languages(spec.languages)
    shard_index = sweep.parse_shard(shard)
    cells = sweep.enumerate_cells(spec, resolve, config_cls)
    mine = sweep.shard_cells(cells, shard_index)
    out = Path(out_dir)
    if dry_run:
        for cell in mine:
            if sweep.is_done(out, cell):
                state = "done"
            else:
                note = sweep.unfinished_note(sweep.cell_dir(out, cell), cell.config, split_trials)
                state = f"todo ({note})" if note else "todo"
            click.echo(f"{cell.index}\t{cell.id}\t{state}\t{cell.label()}")
        click.echo(f"{len(mine)} of {len(cells)} cells ({_axes(spec)}) in shard {shard}",
                   err=True)
        for running in running_sweeps(out):
            click.echo(f"running now in {out}: {running}", err=True)
        return
    entries = [item for entry in list(grid) + list(grid_args) for item in entry.split()]
    command = _command_line(depths, languages, posenc, seeds, entries, preset, jobs, out_dir,
                            shard, search_text, split_trials, trial_text)
    claim_updatable(out, SWEEP)
    try:
        with SweepLock(out, shard_index, command):
            sweep.record_spec(out, spec, cells, command)
            status = sweep.sweep_status(out, mine)
            click.echo(f"sweep: {len(cells)} cells ({_axes(spec)}), "
                       f"shard {shard_index[0]}/{shard_index[1]}: "
                       f"{len(mine)}; done {len(status['done'])}, to run "
                       f"{len(status['pending']) + len(status['failed'])}; {jobs} worker(s) "
                       f"-> {out}", err=True)
            outcome = sweep.run_sweep(mine, out, jobs=jobs, progress=wants_progress(progress),
                                      command=command, shard=shard_index,
                                      echo=lambda m: click.echo(m, err=True),
                                      split_trials=split_trials, trials=trials)
    except KeyboardInterrupt:
        click.echo("interrupted: finished cells are kept and cells in flight resume from their "
                   "last checkpoint; run the same command again to continue", err=True)
        sys.exit(130)
    parts = f" and {outcome.parts} trial part(s)" if split_trials else ""
    click.echo(f"sweep: ran {outcome.ran} cell(s){parts} in {outcome.elapsed_s:.0f}s; "
               f"{outcome.already_done + outcome.ran}/{outcome.total} done, "
               f"{outcome.successes} successful, {len(outcome.failed)} failed", err=True)
    if outcome.failed:
        sys.exit(1)
