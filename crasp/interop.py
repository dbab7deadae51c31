"""crasp models in the tools interpretability researchers use (``docs/interop.md``).

``model`` is a float realization or trained run as ``crasp.models.load_model`` (or
``crasp.compiler.load_model``) returns it. The constructions live in the export package, above
the core: these functions import them on first use (by name, as ``crasp.compiler`` does for
``load_model``), so that importing crasp never loads torch, TransformerLens or transformers.
"""

from __future__ import annotations

import importlib


def to_transformer_lens(model, n_ctx: int | None = None):
    """A TransformerLens ``TransformerBridge`` computing ``model``, its tokenizer attached
    (``crasp.export.transformer_lens``); ``n_ctx`` positions (default: the certified or trained
    length + 1, at most 1024)."""
    return importlib.import_module("crasp.export.transformer_lens").bridge_of(model, n_ctx)


def to_hugging_face(model, n_ctx: int | None = None):
    """(a Hugging Face ``...ForTokenClassification`` model computing ``model``, its tokenizer)
    (``crasp.export.hugging_face``)."""
    return importlib.import_module("crasp.export.hugging_face").hugging_face_of(model, n_ctx)
