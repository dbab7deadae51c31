"""``crasp extract RUN -o PROG.crasp``: a program from a trained (float) run, with its fidelity.

Loaded lazily by ``crasp/cli.py``, which turns every ``CraspError`` (a wrong kind of model, a
state budget exceeded) into its message on stderr and exit status 2.
"""

from __future__ import annotations

import json

import click

from crasp.decompile.cli import check_program_output, vocabulary_only_option, write_program_file
from crasp.decompile.enumerate_states import DEFAULT_MAX_STATES
from crasp.models import check_kind
from crasp.train.extract import extract_run, format_extraction
from crasp.util.progress import progress_option, wants_progress


@click.command("extract")
@click.argument("run_dir", metavar="RUN")
@click.option("-o", "--out", "--output", "output", required=True, metavar="PROG.crasp",
              help="The program file to write (- for standard output).")
@click.option("--precision", metavar="P.S",
              help="Read the run at P total and S fractional bits instead of choosing them "
                   "by validation accuracy.")
@click.option("--max-states", type=click.IntRange(min=1), default=DEFAULT_MAX_STATES,
              show_default=True, help="The decompiler's state budget (as crasp decompile).")
@click.option("--force", is_flag=True,
              help="Replace PROG.crasp if it is a program crasp decompile or extract wrote.")
@click.option("--json", "as_json", is_flag=True,
              help='Print the report as JSON: {"run", "precision", "fidelity", "depth", '
                   '"decompile", "output"}.')
@vocabulary_only_option
@progress_option
def extract_command(run_dir, output, precision, max_states, force, as_json, vocabulary_only,
                    progress):
    """Extract a C-RASP program from a trained RUN of the ordinary (float) class.

    The run is read in fixed precision (P and S chosen by validation accuracy, reported),
    decompiled exactly, and the program's fidelity measured: its agreement with the float
    model at every position of the run's test bins and of the same bins under the skewed and
    extreme distributions; beside it the program's depth, the run's nominal and effective
    depths and the theory's. Exit status 2 when the quantized model has more states than
    --max-states. A run trained with --precision needs no extraction: crasp decompile reads
    it exactly. See docs/decompile.md.

    \b
      crasp train --language L3 --depth 1 --d-model 2 --n-heads 1 -o runs/l3-tiny
      crasp extract runs/l3-tiny -o l3.crasp
    """
    if output != "-":
        check_program_output(output, force)   # before the work; again when it is written
    check_kind(run_dir, "extract")
    result = extract_run(run_dir, max_states, precision, vocabulary_only=vocabulary_only,
                         progress=wants_progress(progress))
    summary = dict(result.summary)
    write_program_file(output, result.text, force)
    if output != "-":
        summary["output"] = output
    report = json.dumps(summary, indent=2) if as_json else format_extraction(summary)
    if output != "-" and not as_json:
        report += f"\n\nwrote {output}"
    click.echo(report, err=output == "-")
