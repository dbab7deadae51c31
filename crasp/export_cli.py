"""``crasp export``: a model as an ONNX graph (``crasp.export``), a TransformerLens bridge or a
Hugging Face model (``crasp.interop``); onnx, transformer-lens and transformers are optional
extras."""

from __future__ import annotations

import click

from crasp.compiler.model_format import load_model
from crasp.errors import CraspError


@click.command("export")
@click.argument("model_dir", metavar="MODEL")
@click.option("--format", "fmt", type=click.Choice(["onnx", "transformer-lens", "hf"],
                                                   case_sensitive=False), default="onnx",
              show_default=True,
              help="The output format: an ONNX graph (a file), a TransformerLens export or a "
                   "Hugging Face save_pretrained directory.")
@click.option("-o", "--out", "--output", "output", required=True, metavar="OUT",
              type=click.Path(),
              help="The file (onnx) or directory (transformer-lens, hf) to write.")
@click.option("--n-ctx", type=int, default=None,
              help="Positions the TransformerLens/Hugging Face model holds (default: the "
                   "certified or trained length + 1, at most 1024).")
@click.option("--force", is_flag=True, help="Replace OUT if crasp wrote it (same format).")
def export_command(model_dir, fmt, output, n_ctx, force):
    """Write MODEL (compiled exact, compiled float or a trained run) as an ONNX graph, or a float
    realization or trained run for TransformerLens or Hugging Face transformers.

    \b
      crasp export dyck1.model --format onnx -o dyck1.onnx
      crasp export dyck1.float --format transformer-lens -o dyck1.tl
      crasp export dyck1.float --format hf -o dyck1.hf

    ONNX: input ids int64 [batch, positions], BOS (id len(vocab)) first; outputs decision (bool
    [batch, positions]) and score (decision = score > 0); see docs/model-format.md. The other
    formats give one logit per position (the score) and carry their tokenizer; what each can
    express, and what is refused, is in docs/interop.md.
    """
    fmt = fmt.lower()
    if fmt != "onnx":
        from crasp.interop.export import write_interop
        write_interop(load_model(model_dir), fmt, output, force, n_ctx)
        click.echo(f"wrote {output}")
        return
    try:
        from crasp.export import write_onnx
    except ImportError as error:
        raise CraspError(f"crasp export needs the onnx package ({error}); install it with "
                         "pip install 'crasp[onnx]'") from None
    write_onnx(load_model(model_dir), output, force)
    click.echo(f"wrote {output}")
