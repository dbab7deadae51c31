"""crasp models in the tools interpretability researchers use (``docs/interop.md``):

* ``to_transformer_lens(model, n_ctx=None)`` -> a TransformerLens ``TransformerBridge`` with its
  tokenizer (``crasp.export.transformer_lens``);
* ``to_hugging_face(model, n_ctx=None)`` -> (a ``...ForTokenClassification`` model, its
  tokenizer) (``crasp.export.hugging_face``).

``model`` is a float realization or trained run as ``crasp.models.load_model`` (or
``crasp.compiler.load_model``) returns it. Both live in the export package, above the core: this
namespace imports them on first use, as ``crasp.compiler`` does for ``load_model``.
"""

from __future__ import annotations

import importlib

__all__ = ["to_hugging_face", "to_transformer_lens"]

_LAZY = {  # name -> (module, attribute)
    "to_transformer_lens": ("crasp.export.transformer_lens", "bridge_of"),
    "to_hugging_face": ("crasp.export.hugging_face", "hugging_face_of"),
}


def __getattr__(name: str):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        return getattr(importlib.import_module(module), attribute)
    raise AttributeError(f"module 'crasp.interop' has no attribute {name!r}")
