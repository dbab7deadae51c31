"""``crasp export MODEL --format NAME -o OUT``: a model for another tool (``crasp.export``)."""

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
              help="The output format: an ONNX graph (a file), a TransformerLens export or a "
                   "Hugging Face save_pretrained directory.")
@click.option("-o", "--out", "--output", "output", required=True, metavar="OUT",
              type=click.Path(),
              help="The file (onnx) or directory (transformer-lens, hf) to write.")
@click.option("--n-ctx", type=click.IntRange(min=1), default=None,
              help="Positions a transformer-lens or hf export holds (default: the certified "
                   "length + 1 of a float realization, the trained length + 1 of a run, at "
                   "most 1024).")
@click.option("--force", is_flag=True, help="Replace OUT if it is what crasp wrote there.")
def export_command(model_dir, fmt, output, n_ctx, force):
    """Write MODEL as an ONNX graph (compiled exact, compiled float or a trained run), or a float
    realization or trained run for TransformerLens or Hugging Face transformers.

    \b
      crasp export dyck1.model --format onnx -o dyck1.onnx
      crasp export dyck1.float --format transformer-lens -o dyck1.tl
      crasp export dyck1.float --format hf -o dyck1.hf

    ONNX: input ids int64 [batch, positions], BOS (id len(vocab)) first; outputs decision (bool
    [batch, positions]) and score (decision = score > 0); see docs/model-format.md. The other
    formats give one logit per position (the score) and carry their tokenizer; what each can
    express, and what it refuses, is in docs/interop.md.
    """
    target = FORMATS[fmt.lower()]
    if n_ctx is not None and not target.sized:
        raise CraspError(f"--n-ctx applies to the transformer-lens and hf formats, not {fmt}")
    module, function = target.writer.split(":")
    try:
        writer = getattr(importlib.import_module(module), function)
    except ImportError as error:
        raise CraspError(f"crasp export --format {fmt} needs the {target.extra} package "
                         f"({error}); install it with pip install 'crasp[{target.extra}]'"
                         ) from None
    model = load_model(model_dir, f"export --format {fmt.lower()}", target.accepts)
    writer(model, output, force, **({"n_ctx": n_ctx} if n_ctx is not None else {}))
    click.echo(f"wrote {output}")
