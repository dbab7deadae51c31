"""``crasp report`` (registered lazily by ``crasp.cli``): the report pipeline behind one command."""

from __future__ import annotations

from pathlib import Path

import click

from crasp.errors import CraspError
from crasp.train.config import LARGEST
from crasp.util.outputs import REPORT, claim_updatable
from crasp.util.progress import progress_option, wants_progress


@click.command("report", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("dirs", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("--out", "-o", "out_dir", type=click.Path(file_okay=False),
              help="Where to write the report (default: DIR/report of the first DIR).")
@click.option("--threshold", type=click.FloatRange(0.0, 1.0, min_open=True), default=0.99,
              show_default=True,
              help="Exact match on the longest test bin that counts as length-generalizing.")
@click.option("--select", type=click.Choice(["val", "long"], case_sensitive=False),
              default="val", show_default=True,
              help="Best hyperparameters by mean validation exact match (val), or by mean exact "
                   "match on the longest TEST bin (long: selection on test data, labelled so in "
                   "the report).")
@click.option("--budget", type=click.IntRange(1, LARGEST["epochs"]), metavar="EPOCHS",
              help="Read every cell at this training budget: the checkpoint validation selects "
                   "within EPOCHS epochs, from the run's per-epoch test records.")
@click.option("--compiled/--no-compiled", default=True, show_default=True,
              help="Compile each language's reference program and score it on the same bins.")
@progress_option
def report_command(dirs, out_dir, threshold, select, budget, compiled, progress):
    """Tabulate and plot one or more sweep directories (shards are merged).

    \b
      crasp report runs/sweep
      crasp report runs/shard-0 runs/shard-1 -o runs/report --select val

    Writes cells.csv, report.md (a table per encoding: language x depth, mean ± std over seeds,
    with the compiled reference program), heatmap_<encoding>.png, report.json and
    compiled_cache.json (reused by the next report in the same place), replacing an earlier
    report there as a whole (never a file of one beside a file of the other), and prints
    one line per language and encoding: the smallest depth that length-generalizes against the
    theory's depth and the compiled program's depth. Hyperparameters are chosen on validation
    unless --select long; with runs that recorded per-epoch test scores, --budget reads every
    cell at a smaller training budget, budget_<encoding>.png plots depth against budget, and
    report.md names the cells that succeed at some budget and fail at the report's.

    \b
      crasp report runs/sweep
      crasp report runs/sweep --budget 6 -o runs/sweep/report-6-epochs
    """
    from crasp.train import report as report_module

    out = Path(out_dir) if out_dir else Path(dirs[0]) / "report"
    claim_updatable(out, REPORT)
    report = report_module.build_report(list(dirs), threshold=threshold, select=select,
                                        compiled=compiled, budget=budget,
                                        progress=wants_progress(progress), previous=out)
    if not report.data.cells:
        raise CraspError(f"report: no finished cells in {', '.join(dirs)}"
                         + report_module.started_text(report.unfinished))
    paths = report_module.write_report(report, out)
    for line in report_module.report_lines(report):
        click.echo(line)
    click.echo(f"report: {len(report.data.cells)} cells -> {paths['markdown']}", err=True)
