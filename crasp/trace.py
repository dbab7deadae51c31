"""Pass: Evaluation -> trace file. Every definition's value at every position of every input.

``.txt`` gives aligned plain-text columns; ``.html``/``.htm`` a self-contained page with one
table per input (true cells shaded), like Hahn's tracer but for a whole batch at once.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Sequence

from crasp.errors import CraspError
from crasp.interpret import Evaluation
from crasp.util.outputs import TRACE, replace_file


def _cell(value) -> str:
    if isinstance(value, (bool,)) or getattr(value, "dtype", None) == bool:
        return "T" if value else "F"
    return str(int(value))


def _rows(evaluation: Evaluation, row: int, tokens: Sequence[str]) -> list[tuple[str, list[str]]]:
    values = evaluation.values_of(row)
    return [(name, [_cell(v) for v in column]) for name, column in values.items()]


def format_text(evaluation: Evaluation, inputs: Sequence[Sequence[str]]) -> str:
    blocks = []
    accept = evaluation.accept   # once: each read computes it for every input
    for row, tokens in enumerate(inputs):
        rows = [("tokens", list(tokens)), *_rows(evaluation, row, tokens)]
        name_width = max(len(name) for name, _ in rows)
        widths = [max((len(cells[i]) for _, cells in rows), default=1) for i in range(len(tokens))]
        lines = [f"input {row + 1}: accept = {bool(accept[row])}"]
        for name, cells in rows:
            padded = " ".join(cell.rjust(width) for cell, width in zip(cells, widths))
            lines.append(f"{name.ljust(name_width)} | {padded}")
        blocks.append("\n".join(lines))
    return f"# crasp trace of {evaluation.program.filename}\n" + "\n\n".join(blocks) + "\n"


def format_html(evaluation: Evaluation, inputs: Sequence[Sequence[str]]) -> str:
    tables = []
    accept = evaluation.accept
    for row, tokens in enumerate(inputs):
        header = "".join(f"<th>{html.escape(t)}</th>" for t in tokens)
        body = []
        for name, cells in _rows(evaluation, row, tokens):
            tds = "".join(
                f'<td class="{"t" if c == "T" else "f" if c == "F" else "n"}">{c}</td>'
                for c in cells)
            body.append(f"<tr><th>{html.escape(name)}</th>{tds}</tr>")
        tables.append(
            f"<h2>input {row + 1}: accept = {bool(accept[row])}</h2>"
            f"<table><tr><th></th>{header}</tr>{''.join(body)}</table>")
    style = ("body{font-family:monospace}table{border-collapse:collapse;margin-bottom:1em}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:center}"
             "td.t{background:#c8f0c8}td.f{background:#f4d0d0}")
    title = html.escape(evaluation.program.filename)
    return (f"<!DOCTYPE html><html><head><meta name='generator' content='crasp trace'>"
            f"<meta charset='utf-8'><title>trace of {title}</title>"
            f"<style>{style}</style></head><body><h1>{title}</h1>{''.join(tables)}</body></html>\n")


def write_trace(path: str | Path, evaluation: Evaluation, inputs: Sequence[Sequence[str]],
                force: bool = False) -> None:
    """Write the trace atomically; an existing file is replaced only if it is a crasp trace
    (its first line says so) and ``force`` is given (``crasp.util.outputs``)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".txt":
        text = format_text(evaluation, inputs)
    elif suffix in (".html", ".htm"):
        text = format_html(evaluation, inputs)
    else:
        raise CraspError(f"trace file {str(path)!r} must end in .txt, .html or .htm")
    replace_file(path, TRACE, force, text.encode("utf-8"))
