"""``crasp export``: a model as an ONNX graph (``crasp.export``; onnx is an optional extra)."""

from __future__ import annotations

import click

from crasp.compiler.model_format import load_model
from crasp.errors import CraspError


@click.command("export")
@click.argument("model_dir", metavar="MODEL")
@click.option("--format", "fmt", type=click.Choice(["onnx"], case_sensitive=False), default="onnx",
              show_default=True,
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
    try:
        from crasp.export import write_onnx
    except ImportError as error:
        raise CraspError(f"crasp export needs the onnx package ({error}); install it with "
                         "pip install 'crasp[onnx]'") from None
    write_onnx(load_model(model_dir), output, force)
    click.echo(f"wrote {output}")
