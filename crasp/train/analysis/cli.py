"""``crasp analyze RUN [-o OUT] [--hessian]``."""

from __future__ import annotations

from pathlib import Path

import click

from crasp.train.analysis.hessian import DEFAULT_MAX_PARAMS, check_size
from crasp.util.progress import progress_option, wants_progress


@click.command("analyze")
@click.argument("run_dir", metavar="RUN", type=click.Path(path_type=Path))
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="Output directory (default RUN/analysis, or RUN/hessian with --hessian).")
@click.option("--hessian", "with_hessian", is_flag=True,
              help="Compute the loss Hessian over the attention and feed-forward weights instead.")
@click.option("--max-params", type=click.IntRange(1), default=DEFAULT_MAX_PARAMS,
              show_default=True, help="Refuse a Hessian over more weights than this.")
@click.option("--hessian-strings", type=click.IntRange(1), default=32, show_default=True,
              help="Strings in the Hessian's fixed batch (from the shortest test bin).")
@click.option("--force", is_flag=True, help="Replace an earlier output of crasp analyze.")
@progress_option
def analyze_command(run_dir, out, with_hessian, max_params, hessian_strings, force, progress):
    """Ablation, attention paths and effective depth of a trained RUN (or its Hessian).

    \b
      crasp analyze runs/L5-d3-nope-s0
      crasp analyze runs/L5-d3-nope-s0 --hessian -o runs/L5-d3-nope-s0/hessian

    Writes RUN/analysis/ (ablations.csv, pruning.csv/.png, paths.csv/.png) or, with --hessian,
    RUN/hessian/ (hessian.json, hessian_blocks.csv/.png); docs/analysis.md explains them.
    """
    from crasp.models import check_kind
    from crasp.train.analysis import driver, outputs
    from crasp.train.analysis.loading import load_run

    check_kind(run_dir, "analyze")  # a trained run, or one message saying what it is instead
    out = out or run_dir / ("hessian" if with_hessian else "analysis")
    loaded = load_run(run_dir)
    if with_hessian:
        check_size(loaded.model, max_params)
    if with_hessian:
        record = outputs.write_directory(out, force, lambda staging: driver.analyze_hessian(
            loaded, staging, hessian_strings, max_params))
        click.echo(f"Hessian over {sum(record['sizes'])} weights in {len(record['blocks'])} "
                   f"blocks -> {out}")
        return
    record = outputs.write_directory(out, force, lambda staging: driver.analyze_ablations(
        loaded, staging, wants_progress(progress)))
    effective = record["effective_depth"]
    click.echo(f"{record['language']} {record['posenc']}: nominal depth {record['nominal_depth']}, "
               f"effective depth {effective['mean']['effective_depth']} (mean-ablation), "
               f"{effective['zero']['effective_depth']} (zero-ablation), theory "
               f"{record['theory_depth']}; exact match on {record['longest_bin']}: "
               f"{record['baseline'][record['longest_bin']]['exact_match']:.2%} -> {out}")
