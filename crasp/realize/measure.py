"""``crasp compile --target float``: write the float realization, certify it, measure it.

The certificate (``realization``) covers every input of length <= N. Beyond N the compiler
*measures*: random strings of growing lengths run through the checkpoint and the interpreter,
and the first position where their decisions differ gives the measured first failing length.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from crasp import syntax
from crasp.compiler.executor import execute
from crasp.realize.realization import FloatRealization, realize_float
from crasp.fmt import format_program
from crasp.interpret import evaluate
from crasp.realize.checkpoint import save_float_realization
from crasp.train.checkpoint import Checkpoint, load_checkpoint

GROWTH = 1.25
MEASURE_UP_TO = 4          # times the certified length
STRINGS_PER_LENGTH = 8
MAX_MEASURED_LENGTH = 4096
"""The longest strings ``compile`` measures: softmax attention costs O(T^2) per string, so a
measurement far beyond this would take hours on a CPU (``benchmarks/bench_float.py`` goes
further where it can afford to)."""


@dataclass(frozen=True)
class Measurement:
    """The first failing length found (None: none up to ``searched_up_to``)."""

    first_failing_length: int | None
    searched_up_to: int
    strings_per_length: int


def first_disagreement(program: syntax.Program, model, strings: list[list[str]]) -> int | None:
    """The smallest prefix length (1-based position) at which ``model`` and the interpreter
    decide differently on any of ``strings``, or None."""
    got = execute(model, strings).output
    expected = evaluate(program, strings).output
    wrong = got != expected
    if not wrong.any():
        return None
    return int(np.argmax(wrong.any(axis=0))) + 1


def measure(program: syntax.Program, model, certified_length: int, seed: int = 0,
            up_to: int = MEASURE_UP_TO, strings: int = STRINGS_PER_LENGTH) -> Measurement:
    """Run ``strings`` random strings at each length N * GROWTH^k (k >= 1) up to ``up_to`` * N;
    every position of a string is compared, so a length covers all shorter prefixes."""
    rng = np.random.default_rng(seed)
    alphabet = np.array(program.alphabet, dtype=object)
    length, limit = certified_length, min(up_to * certified_length, MAX_MEASURED_LENGTH)
    while length < limit:
        length = min(limit, max(length + 1, math.ceil(length * GROWTH)))
        batch = [list(alphabet[rng.integers(0, len(alphabet), length)]) for _ in range(strings)]
        failing = first_disagreement(program, model, batch)
        if failing is not None:
            return Measurement(failing, length, strings)
    return Measurement(None, limit, strings)


def compile_float(program: syntax.Program, output: str, max_length: int, dtype: str,
                  measure_beyond: bool = True, force: bool = False,
                  style: str = "robust") -> dict:
    """Write the float realization of ``program`` in the gadget ``style`` to ``output``
    (replacing an earlier one only with ``force``); return its summary."""
    realization: FloatRealization = realize_float(program, max_length, dtype, style=style)
    source = program.source or format_program(program)
    name = Path(program.filename).stem if program.filename else "program"
    save_float_realization(output, realization, name,
                           hashlib.sha256(source.encode("utf-8")).hexdigest(), force)
    checkpoint: Checkpoint = load_checkpoint(output)
    summary = {
        "target": "float", "dtype": dtype, "gadgets": style, "output": output,
        "layers": len(realization.ffn_widths), "heads": 1 if realization.ffn_widths else 0,
        "d_model": len(realization.residual_labels), "params": checkpoint.params,
        "hidden_layers": [len(widths) for widths in realization.ffn_widths],
        "hidden_layer_reasons": realization.hidden_layer_reasons,
        "ffn_widths": realization.ffn_widths, "gain": realization.gain,
        "certified_length": realization.certified_length,
        "largest_certifiable": realization.largest_certifiable,
    }
    if measure_beyond and realization.certified_length < MAX_MEASURED_LENGTH:
        found = measure(program, checkpoint, realization.certified_length)
        summary["first_failing_length"] = found.first_failing_length
        summary["measured_up_to"] = found.searched_up_to
    return summary


def format_float_summary(summary: dict) -> str:
    hidden = ", ".join(str(n) for n in summary["hidden_layers"])
    lines = [
        f"float realization ({summary['dtype']}, {summary['gadgets']} gadgets): "
        f"{summary['layers']} layers, one head each, "
        f"d_model {summary['d_model']}, {summary['params']:,} parameters",
        f"hidden layers per feed-forward: {hidden or '-'} (widths {summary['ffn_widths']})",
        *(f"  {reason}" for reason in summary["hidden_layer_reasons"]),
        f"threshold gain {summary['gain']}",
        f"certified: exact at every position of every input of length <= "
        f"{summary['certified_length']} (the largest certifiable in {summary['dtype']}: "
        f"{summary['largest_certifiable']:,})",
    ]
    if "first_failing_length" not in summary:
        lines.append(f"not measured beyond the certified length: strings longer than "
                     f"{MAX_MEASURED_LENGTH:,} are too slow to run with softmax attention here")
    else:
        failing = summary["first_failing_length"]
        lines.append(f"measured beyond: first failing length {failing:,}" if failing else
                     f"measured beyond: no failure found up to length "
                     f"{summary['measured_up_to']:,}")
    return "\n".join(lines)
