"""crasp models in the tools interpretability researchers use: TransformerLens
(``to_transformer_lens``) and Hugging Face ``transformers`` (``to_hugging_face``), both built
from one block plan (``blocks``); see docs/interop.md."""

from __future__ import annotations


def to_transformer_lens(model, n_ctx: int | None = None):
    """A TransformerLens ``TransformerBridge`` computing ``model`` (a float realization or a
    trained run, as ``crasp.compiler.load_model`` returns it), with its tokenizer attached."""
    from crasp.interop.transformer_lens import bridge_of
    return bridge_of(model, n_ctx)


def to_hugging_face(model, n_ctx: int | None = None):
    """A Hugging Face ``...ForTokenClassification`` model computing ``model`` and its
    tokenizer, as a pair."""
    from crasp.interop.hugging_face import hugging_face_of
    return hugging_face_of(model, n_ctx)
