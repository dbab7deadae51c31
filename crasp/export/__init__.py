"""Export formats: a crasp model written for another tool, one module per target.

    onnx.py             ``write_onnx``: any runnable model as an ONNX graph (the onnx extra)
    blocks.py           a float realization or trained run as uniform pre-norm blocks
    tokenizer.py        the vocabulary and BOS as a Hugging Face tokenizer
    transformer_lens.py ``write_transformer_lens``: a TransformerLens ``TransformerBridge``
    hugging_face.py     ``write_hugging_face``: a ``save_pretrained`` directory (Llama / GPT-2)
    cli.py              ``crasp export MODEL --format NAME -o OUT``

``FORMATS`` is the registry ``crasp export`` reads: a new target is a module here and one
``ExportFormat`` entry naming the kinds of model it takes (``crasp.models.kinds``), its writer
(imported only when used, as its package is an optional extra) and that extra. Exports read
models through ``crasp.models`` and import nothing above it.
"""

from __future__ import annotations

from dataclasses import dataclass

from crasp.models.kinds import FIXED_PRECISION, FLOAT_REALIZATION, TRAINED_RUN, Kind


@dataclass(frozen=True)
class ExportFormat:
    """A target: the kinds it takes, its writer ``module:function`` (called as
    ``function(model, path, force)`` with the model's type from ``crasp.models``), the extra
    that installs what it needs, and what the written file is."""

    accepts: tuple[Kind, ...]
    writer: str
    extra: str
    output: str
    sized: bool = False
    """Whether the writer takes ``n_ctx`` (the positions a framework model is built for)."""


FORMATS: dict[str, ExportFormat] = {
    "onnx": ExportFormat((FIXED_PRECISION, FLOAT_REALIZATION, TRAINED_RUN),
                         "crasp.export.onnx:write_onnx", "onnx", "ONNX graph"),
    "transformer-lens": ExportFormat(
        (FLOAT_REALIZATION, TRAINED_RUN), "crasp.export.transformer_lens:write_transformer_lens",
        "interop", "TransformerLens export directory", sized=True),
    "hf": ExportFormat(
        (FLOAT_REALIZATION, TRAINED_RUN), "crasp.export.hugging_face:write_hugging_face",
        "interop", "Hugging Face save_pretrained directory", sized=True),
}
