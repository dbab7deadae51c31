"""``crasp export --format transformer-lens|hf``: the writers of ``crasp.interop``, with the
missing optional packages reported as one message."""

from __future__ import annotations

from crasp.errors import CraspError


def write_interop(model, fmt: str, output: str, force: bool, n_ctx: int | None) -> None:
    """Write ``model`` in ``fmt`` ("transformer-lens" or "hf") to the directory ``output``."""
    needed = {"transformer-lens": "transformer_lens", "hf": "transformers"}[fmt]
    try:
        __import__(needed)
    except ImportError as error:
        raise CraspError(f"--format {fmt} needs the {needed} package ({error}); install it with "
                         f"pip install 'crasp[interop]'") from None
    if fmt == "transformer-lens":
        from crasp.interop.transformer_lens import write_transformer_lens
        write_transformer_lens(model, output, force, n_ctx)
    else:
        from crasp.interop.hugging_face import write_hugging_face
        write_hugging_face(model, output, force, n_ctx)
