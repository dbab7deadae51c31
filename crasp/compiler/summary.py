"""A compiled model's vital statistics, as a dict (``crasp compile --json``) and as text."""

from __future__ import annotations

from crasp.compiler.model_format import CompiledModel
from crasp.util.tables import format_table


SHOWN_PER_CELL = 12
"""Names or tests a summary cell lists before it says how many more there are (the JSON output,
``--json``, always has all of them)."""


def _abridged(items: list[str], separator: str) -> str:
    if len(items) <= SHOWN_PER_CELL:
        return separator.join(items)
    hidden = len(items) - SHOWN_PER_CELL
    return separator.join(items[:SHOWN_PER_CELL]) + f"{separator}... ({hidden:,} more)"


def compile_summary(model: CompiledModel) -> dict:
    """Depth, layers, heads, widths, parameters, precision and the per-layer table.

    Works on any valid model directory; the keys that only the compiler writes (the bound,
    the layer table, the program) are None or empty for models from elsewhere.
    """
    spec = model.spec
    return {
        "depth": spec.depth,
        "layers": spec.n_layers,
        "heads": spec.n_heads,
        "d_head": spec.d_head,
        "d_model": spec.d_model,
        "d_model_bound": spec.d_model_bound,
        "params": model.params,
        "precision": {"total_bits": spec.precision.total_bits,
                      "frac_bits": spec.precision.frac_bits},
        "precision_set_by": spec.precision_set_by,
        "ffn_widths": [list(widths) for widths in spec.ffn_widths],
        "vocab": list(spec.vocab),
        "program_file": spec.program_file,
        "answer": spec.answer,
        "layer_table": spec.layer_table or [],
        "posenc": spec.posenc or "nope",
        "periodic_moduli": list(spec.periodic_moduli),
        "alibi": spec.alibi,
        "tl_pos_depth": spec.tl_pos_depth,
    }


def format_summary(summary: dict) -> str:
    p, s = summary["precision"]["total_bits"], summary["precision"]["frac_bits"]
    unit = "integers" if s == 0 else f"multiples of 2^-{s}"
    low, high = -(2 ** (p - 1)), 2 ** (p - 1) - 1
    bound = summary.get("d_model_bound")
    plural = "s" if summary["heads"] > 1 else ""
    heads = (f"{summary['heads']} head{plural} per layer (d_head {summary['d_head']})"
             if summary["layers"] else "embedding and output only")
    lines = [
        f"program     {summary.get('program_file') or '?'} (answer {summary.get('answer') or '?'},"
        f" depth {summary['depth']})",
        f"layers      {summary['layers']}, {heads}",
        f"d_model     {summary['d_model']}"
        + (f" (bound #Booleans + #comparisons + |alphabet| + 3"
           f"{_POSITIONAL_BOUND * _positional(summary)} = {bound})" if bound else ""),
        "ffn widths  " + ("; ".join(f"layer {i}: {' '.join(map(str, w))}"
                                    for i, w in enumerate(summary["ffn_widths"], start=1))
                          or "none"),
        f"parameters  {summary['params']}",
        *_positions(summary),
        f"precision   p = {p} total bits, s = {s} fractional bits ({unit} in [{low}, {high}])",
    ]
    if summary.get("precision_set_by"):
        lines.append(f"            set by {summary['precision_set_by']}")
    if summary["layer_table"]:
        lines.append("")
        rows = [("layer", "definitions", "ffn widths", "attention tests (d < 0)")]
        rows += [(str(row["layer"]), _abridged(row["definitions"], ", ") or "-",
                  " ".join(map(str, row["ffn_widths"])), _abridged(row["tests"], "; "))
                 for row in summary["layer_table"]]
        lines += format_table(rows)
    return "\n".join(lines)


_POSITIONAL_BOUND = " + table rows + token-and-residue coordinates + local counts"


def _positional(summary: dict) -> bool:
    return bool(summary.get("periodic_moduli") or summary.get("alibi"))


def _positions(summary: dict) -> list[str]:
    """The positional encoding line of a version-3 model (none for a NoPE model)."""
    parts = [f"a periodic table of {m} rows" for m in summary.get("periodic_moduli", [])]
    if summary.get("alibi"):
        parts.append("ALiBi slopes (one local head per offset)")
    if not parts:
        return []
    lines = [f"positions   --posenc {summary.get('posenc')}: {', '.join(parts)}"]
    lower = summary.get("tl_pos_depth")
    if lower is not None and lower < summary["layers"]:
        layers = summary["layers"]
        lines += [f"            Knee-Deep's TL[◁#]^pos depth is {lower}, lower than the "
                  f"{layers} layer{'s' * (layers != 1)}:",
                  "            its Y (a local relation) adds no depth; here a local relation "
                  "takes an attention layer"]
    return lines
