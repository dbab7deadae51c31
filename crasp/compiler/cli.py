"""``crasp compile PROG -o DIR``: write the model directory and print its summary.

The lead's ``crasp/cli.py`` loads this command lazily (so only ``crasp compile`` pays for it)
and turns every ``CraspError`` into a message on stderr and exit status 2.
"""

from __future__ import annotations

import json
import sys

import click

from crasp.compiler.compiling import compile_program
from crasp.compiler.encodings import POSENCS
from crasp.compiler.summary import compile_summary, format_summary
from crasp.errors import CraspError
from crasp.loading import dialect_option, load_program_argument, split_tokens
from crasp.verify.cli import prove_equivalence, prove_option


FLOAT_OPTIONS = {"max_length": "--max-length", "dtype": "--dtype", "gadgets": "--gadgets"}


def _refuse_float_options(context: click.Context) -> None:
    """The exact target has no float type, length or gadgets: an option for the float target
    given with it (even at its default value) is a mistake to point out, not to ignore."""
    given = [option for name, option in FLOAT_OPTIONS.items()
             if context.get_parameter_source(name) not in (None,
                                                           click.core.ParameterSource.DEFAULT)]
    if given:
        raise CraspError(f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to "
                         f"--target float only; the exact target (the default) is the "
                         f"fixed-precision model, exact at every length: add --target float "
                         f"or drop {'it' if len(given) == 1 else 'them'}")


@click.command("compile")
@click.argument("program_path", metavar="PROG")
@click.option("-o", "--out", "--output", "output", required=True, metavar="DIR",
              type=click.Path(file_okay=False),
              help="The model directory to write (config.json + model.safetensors): absent or "
                   "empty, or a crasp model directory to replace with --force.")
@click.option("--force", is_flag=True,
              help="Replace a crasp model directory at DIR (never anything else).")
@click.option("--json", "as_json", is_flag=True,
              help='Print the summary as JSON: {"depth", "layers", "heads", "d_model", "params", '
                   '"precision": {"total_bits", "frac_bits"}, "ffn_widths", "layer_table", ...}.')
@click.option("--alphabet", "extra_alphabet", multiple=True,
              help="Extra tokens (space-separated) for the vocabulary of a program that declares "
                   "no alphabet.")
@click.option("--target", type=click.Choice(["exact", "float"], case_sensitive=False),
              default="exact",
              show_default=True,
              help="exact: the fixed-precision model; float: a float transformer (softmax, "
                   "ReLU, no rounding) in the trainer's checkpoint format, certified exact up "
                   "to --max-length.")
@click.option("--max-length", type=click.IntRange(min=1), metavar="N",
              help="(--target float) The longest input the float model must be exact on.")
@click.option("--dtype", type=click.Choice(["float32", "float64"], case_sensitive=False),
              default="float32",
              show_default=True, help="(--target float) The float type it is certified for.")
@click.option("--gadgets", type=click.Choice(["robust", "minimal"], case_sensitive=False),
              default="robust", show_default=True,
              help="(--target float) robust: every bit made clean (one more hidden layer per "
                   "layer; more slack when training from these weights); minimal: the exact "
                   "model's hidden layers (exact, with no slack against weight changes).")
@click.option("--posenc", type=click.Choice(POSENCS, case_sensitive=False), default="auto",
              show_default=True,
              help="The positional encoding: auto (the least the program needs), nope (no "
                   "positions), sinusoidal (a periodic table: mod, pos_even), alibi (ALiBi "
                   "heads over a periodic table: local relations #[offset(c)], and mod).")
@prove_option
@dialect_option
def compile_command(program_path, output, force, as_json, extra_alphabet, target, max_length,
                     dtype, gadgets, posenc, prove_length, dialect):
    """Compile PROG to the weights of an equivalent transformer in DIR.

    The model has one layer per counting level (exactly the program's depth), one head per
    layer (plus one ALiBi head per distinct offset of a layer's local relations), and runs in
    the smallest fixed precision (p total bits, s fractional bits) for which it agrees with the
    interpreter at every position of every input, at any length.

    \b
      crasp compile examples/dyck1.crasp -o dyck1.model
      crasp run --model dyck1.model "( ( ) )"
      crasp depth-check examples/dyck1.crasp --verify
      crasp compile examples/dyck1.crasp --target float --max-length 1000 -o dyck1.float

    Positional programs (pos_even, mod, #[pred], #[offset(c)] ...) compile to a version-3
    model with a periodic positional table and, for local relations, ALiBi heads.
    """
    if target == "exact":
        _refuse_float_options(click.get_current_context())
    program = load_program_argument(program_path, split_tokens(extra_alphabet), dialect)
    if prove_length is not None and target == "float":
        raise click.UsageError("--prove checks the exact model (decompiled); drop --target float")
    if target == "float":
        if max_length is None:
            raise click.UsageError("--target float needs --max-length N")
        from crasp.realize.measure import compile_float, format_float_summary  # torch
        summary = compile_float(program, output, max_length, dtype, force=force,
                                style=gadgets.lower())
        click.echo(json.dumps(summary, indent=2) if as_json else format_float_summary(summary))
        return
    model = compile_program(program, posenc.lower())
    model.save(output, force=force)
    summary = {**compile_summary(model), "output": output}
    if as_json:
        click.echo(json.dumps(summary, indent=2))
    else:
        click.echo(format_summary(summary))
        click.echo(f"\nwrote {output}/config.json and {output}/model.safetensors")
    if prove_length is not None:
        from crasp.compiler import decompile_model

        decompiled = decompile_model(model, source=output).program
        if not prove_equivalence(program, decompiled, prove_length, "compile --prove"):
            sys.exit(1)
