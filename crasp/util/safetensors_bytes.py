"""Safetensors files whose bytes depend only on their tensors and metadata.

The safetensors library (0.8) keeps a file's ``__metadata__`` in a hash map whose order is drawn
afresh for every save, so the same model saved twice (``crasp compile`` run twice on one
program, a run's checkpoint written by two commits) differed in its header whenever the
metadata had two or more keys. Every crasp writer of a ``.safetensors`` file passes the
library's bytes through ``stable``; readers are unaffected (the format does not order the
header's keys).
"""

from __future__ import annotations

import json
import struct

HEADER_SIZE = struct.Struct("<Q")
METADATA = "__metadata__"


def stable(data: bytes) -> bytes:
    """``data`` (a safetensors file) with its metadata in key order. The tensors' entries keep
    the library's order and offsets (it sorts them itself) and the data is unchanged; the
    header is compact JSON padded with spaces to a multiple of 8 bytes, as the library
    writes it, so a file whose metadata was already in order comes back byte for byte."""
    (size,) = HEADER_SIZE.unpack_from(data)
    header = json.loads(data[HEADER_SIZE.size:HEADER_SIZE.size + size])
    if METADATA in header:
        header[METADATA] = dict(sorted(header[METADATA].items()))
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
    text += b" " * (-len(text) % 8)
    return HEADER_SIZE.pack(len(text)) + text + data[HEADER_SIZE.size + size:]
