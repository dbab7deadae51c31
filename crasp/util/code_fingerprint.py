"""Which crasp code is running: a fingerprint of its Python sources.

The version number names a release, but experiments run from checkouts between releases, and
a change of the trainer's floating-point order changes results in their last digits (the #17
attention rewrite did: a sweep's cell ids hash the config, not the code, so two runs of one
cell by different code share an id). ``crasp --version`` prints the fingerprint, every
``results.json`` records it (``environment["code"]``), and ``crasp report`` counts them.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def code_fingerprint() -> str:
    """The first 12 hex digits of the SHA-256 of crasp's Python sources (path and bytes, in path
    order), as installed: equal for a source checkout and the wheel built from it."""
    root = Path(__file__).parent.parent  # crasp/, this module being crasp/util/code_fingerprint.py
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:12]
