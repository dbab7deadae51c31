"""``crasp zoo build`` / ``crasp zoo check``: the ground-truth collection (``collection``)."""

from __future__ import annotations

import click

from crasp.errors import CraspError
from crasp.util.progress import progress_option, wants_progress


@click.group("zoo")
def zoo_command():
    """Compiled models with their ground-truth circuits, for scoring circuit discovery.

    \b
      crasp zoo build -o zoo --programs 'L*' --random 12 --depths 1:6 --seed 0
      crasp zoo check zoo
    """


@zoo_command.command("build")
@click.option("-o", "--out", "--output", "output", required=True, metavar="ZOO",
              type=click.Path(file_okay=False), help="The directory to write.")
@click.option("--programs", "programs_glob", default="*", show_default=True, metavar="GLOB",
              help="Which reference programs (crasp languages) to include, by name; the L_k, "
                   "E_k and Dyck families are among them.")
@click.option("--random", "random_count", type=click.IntRange(min=0), default=0,
              show_default=True, metavar="N", help="Add N seeded random programs.")
@click.option("--depths", default="1:6", show_default=True, metavar="LOW:HIGH",
              help="Depths of the random programs (they cycle through the range).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the random programs.")
@click.option("--force", is_flag=True, help="Replace ZOO if it is a zoo crasp wrote.")
@progress_option
def build_command(output, programs_glob, random_count, depths, seed, force, progress):
    """Compile reference and random programs into ZOO: per model the weights, config, program
    and meta.json (its circuit), plus index.csv and index.md."""
    from crasp.zoo.collection import build_zoo, parse_depths

    summary = build_zoo(output, programs_glob, random_count, parse_depths(depths), seed, force,
                        wants_progress(progress))
    for skipped in summary["skipped"]:
        click.echo(f"skipped {skipped}")
    click.echo(f"wrote {len(summary['models'])} models to {output}")


@zoo_command.command("check")
@click.argument("zoo", metavar="ZOO")
@progress_option
def check_command(zoo, progress):
    """Re-verify every model of ZOO against its program: its hash, its weights, and its
    decisions at every position against the interpreter."""
    from crasp.zoo.collection import check_zoo

    results = check_zoo(zoo, wants_progress(progress))
    failed = [(name, problem) for name, problem in results if problem]
    for name, problem in results:
        click.echo(f"{name}: {'ok' if problem is None else problem}")
    if failed:
        raise CraspError(f"{len(failed)} of {len(results)} models failed the check")
    click.echo(f"all {len(results)} models agree with their programs")


@zoo_command.command("score")
@click.argument("zoo", metavar="ZOO")
@click.argument("name", metavar="MODEL")
@click.option("--drop", multiple=True, type=int, metavar="NODE",
              help="Score the ground-truth circuit without this node (repeatable): a "
                   "stand-in for a discovered circuit that missed it.")
@click.option("--edges/--no-edges", default=True, show_default=True,
              help="Also cut each edge of the circuit alone.")
def score_command(zoo, name, drop, edges):
    """Score a circuit of MODEL in ZOO by ablation: the share of decisions kept when every
    node outside it is zero-ablated, and which of its edges change some decision when cut."""
    from crasp.zoo.scoring import score_in_zoo

    click.echo(score_in_zoo(zoo, name, set(drop), edges))


@zoo_command.command("hooks")
@click.argument("program_path", metavar="PROG")
def hooks_command(program_path):
    """Print where each definition of PROG lives in its TransformerLens export (hook points and
    residual coordinates) and the counts each head computes, as markdown tables."""
    import crasp
    from crasp.zoo.hooks import hook_table

    click.echo(hook_table(crasp.load_program(program_path)), nl=False)
