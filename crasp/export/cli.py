"""``crasp export MODEL --format NAME -o FILE``: a model for another tool (``crasp.export``)."""

from __future__ import annotations

import importlib

import click

from crasp.errors import CraspError
from crasp.export import FORMATS
from crasp.models import load_model


@click.command("export")
@click.argument("model_dir", metavar="MODEL")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS), case_sensitive=False),
              default="onnx", show_default=True,
              help="The output format.")
@click.option("-o", "--out", "--output", "output", required=True, metavar="FILE",
              type=click.Path(dir_okay=False),
              help="The file to write.")
@click.option("--force", is_flag=True, help="Replace FILE if it is an ONNX file crasp wrote.")
def export_command(model_dir, fmt, output, force):
    """Write MODEL (compiled exact, compiled float or a trained run) as an ONNX graph.

    \b
      crasp export dyck1.model --format onnx -o dyck1.onnx

    Input ids: int64 [batch, positions], BOS (id len(vocab)) first; outputs decision (bool
    [batch, positions]) and score (decision = score > 0). See docs/model-format.md.
    """
    target = FORMATS[fmt.lower()]
    module, function = target.writer.split(":")
    try:
        writer = getattr(importlib.import_module(module), function)
    except ImportError as error:
        raise CraspError(f"crasp export --format {fmt} needs the {target.extra} package "
                         f"({error}); install it with pip install 'crasp[{target.extra}]'"
                         ) from None
    model = load_model(model_dir, f"export --format {fmt.lower()}", target.accepts)
    writer(model, output, force)
    click.echo(f"wrote {output}")
