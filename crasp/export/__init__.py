"""Export formats: a crasp model written for another tool, one module per target.

    onnx.py   ``write_onnx``: any runnable model as an ONNX graph (the onnx extra)
    cli.py    ``crasp export MODEL --format NAME -o OUT``

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


FORMATS: dict[str, ExportFormat] = {
    "onnx": ExportFormat((FIXED_PRECISION, FLOAT_REALIZATION, TRAINED_RUN),
                         "crasp.export.onnx:write_onnx", "onnx", "ONNX graph"),
}
