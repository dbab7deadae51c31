"""The directories the interoperability exports write, as ``crasp.util.outputs`` kinds: a place
holding one of them may be replaced with ``--force``; anything else is refused."""

from __future__ import annotations

from crasp.util.outputs import OutputKind

INTEROP_EXPORT = OutputKind(
    "TransformerLens or Hugging Face export", "crasp.json",
    lambda value: isinstance(value, dict)
    and value.get("format") in ("crasp-transformer-lens", "crasp-hugging-face"),
    written=("crasp.json", "config.json", "*.safetensors", "*.safetensors.index.json",
             "tokenizer*.json", "special_tokens_map.json", "added_tokens.json",
             "generation_config.json", "vocab*", "merges.txt", "*.jinja"))
