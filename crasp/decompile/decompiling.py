"""Driver: CompiledModel -> Decompilation. A fixed-precision transformer back to a C-RASP
program of the same depth (Knee-Deep, thm:rtfr_to_TLCl), as a pipeline of three passes:

    enumerate_states   the residual states after every layer, and the exact attention and
                       feed-forward tables on them            (``enumerate_states``)
    classify           merge the states no later layer tells apart   (``classify``)
    write_program      one Boolean per class, one comparison per head-output threshold
                                                                    (``write_program``)

The program reads BOS-free counts, as C-RASP does, and answers at every position exactly
what the model decides there, the empty input (BOS) and tokens outside the vocabulary
included; its depth is at most the number of layers (or 1, for a model without layers that
tells BOS from an outside token), and equal to it unless the simplification proves that the
answer needs fewer nested levels of counting. ``--verify`` checks this against the executor
rather than assuming it.
Then, optionally, ``vocabulary`` (``--vocabulary-only``: exact on the strings of the model's
own tokens only, shrunk for them) and ``readable`` (the same answers, minimized and named).
"""

from __future__ import annotations

from dataclasses import dataclass

import crasp
from crasp.decompile.classify import classify
from crasp.decompile.write_program import check_vocabulary, write_program
from crasp.decompile.budget import DEFAULT_MAX_STATES, Budget, StateLimitError
from crasp.decompile.enumerate_states import StateSource, enumerate_states
from crasp.decompile import vocabulary
from crasp.decompile.readable import Unreadable, readable_program
from crasp.compiler.model_format import CompiledModel
from crasp.util.progress import progress_bar


@dataclass(frozen=True)
class Decompilation:
    """The program's text, the program read back from it (so ``--verify`` checks what was
    written), and the summary (``format_decompile_summary``)."""

    program: crasp.Program
    text: str
    summary: dict


def decompile_model(model: CompiledModel | StateSource, source: str = "a model",
                    max_states: int = DEFAULT_MAX_STATES, readable: bool = True,
                    vocabulary_only: bool = False, progress: bool = False) -> Decompilation:
    """The C-RASP program, of depth at most the model's layer count, that answers as ``model``
    at every position of every input (the passes: ``enumerate_states`` → ``classify``
    → ``write_program``, then ``readable`` unless ``readable`` is False or its program would
    be longer; the derivation is in their docstrings). ``model`` is a format model or a
    ``StateSource`` (a float run read in fixed precision: ``crasp extract``). With
    ``vocabulary_only`` the program answers as the model on every string of the model's
    tokens only, and is shrunk for them first (``vocabulary``). The program returned is the
    text written, read back. Raises ``CraspError`` before the work would
    exceed ``max_states`` units (``budget.py``: states enumerated, attention-table pairs, count
    terms written; ``summary["work"]`` is what it spent), and for a vocabulary token that no
    token literal can hold (``crasp.parse.token_literal_problem``).

    >>> import crasp
    >>> from crasp.compiler import compile_program
    >>> model = compile_program(crasp.load_program(crasp.example("dyck1")))
    >>> result = decompile_model(model)
    >>> result.summary["depth"], crasp.depth_of(result.program)
    (2, 2)
    """
    if isinstance(model, CompiledModel):
        model = StateSource.from_model(model)
    check_vocabulary(model.vocab, source)
    # no time left is estimated: the work ends where the model's states end, not at the limit
    with progress_bar(total=max_states, desc="decompile", unit="unit",
                      bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} units of --max-states "
                                 "[{elapsed}, {rate_fmt}]", disable=not progress) as bar:
        budget = Budget(max_states, charged=bar.update)
        machine = enumerate_states(model, budget)
        classes = classify(machine)
        text = write_program(machine, classes, list(model.labels), source, budget)
        program = crasp.parse_program(text, source)  # what was written, read back
        note = READABLE_NOTE
        if vocabulary_only:
            text, program = vocabulary.over_vocabulary(text, program, tuple(model.vocab))
            note = vocabulary.NOTE
        readability = "not asked for"
        if readable:
            text, program, readability = shorter(text, program, budget, note)
    report = crasp.analyze(program)
    summary = {
        "layers": len(machine.layers),
        "depth": report.depth,
        "states": [{"level": level, "states": len(states), "classes": count}
                   for level, (states, count) in enumerate(zip(machine.states, classes.count))],
        "candidates": machine.candidates,
        "definitions": len(program.definitions),
        "comparisons": sum(1 for d in program.definitions
                           for node in crasp.syntax.walk(d.expr)
                           if isinstance(node, crasp.syntax.Compare)),
        "depths": {d.name: d.depth for d in report.definitions},
        "work": budget.spent,
        "readable": readability,
        "vocabulary_only": vocabulary_only,
    }
    return Decompilation(program, text, summary)


READABLE_OVER_BUDGET = "kept as written: minimizing its formulas would exceed --max-states"
"""How ``summary["readable"]`` begins where the readable pass would have exceeded the budget."""


READABLE_NOTE = "// A definition per counted formula, and the answer."
"""The second line of a program the readable pass wrote (over every input)."""


def shorter(text: str, program: crasp.Program, budget: Budget, note: str = READABLE_NOTE
            ) -> tuple[str, crasp.Program, str]:
    """``text`` and its ``program`` rewritten by ``readable.readable_program`` and read back
    (``note`` its second line), unless that is longer in definition lines or in characters,
    the program is not one the pass reads, or the pass would take ``budget`` past its limit
    (the exact program as written is kept then: the decompilation itself is done); the third
    item says which."""
    try:
        rewritten = readable_program(program, budget)
    except Unreadable:
        return text, program, "kept as written (a construct the readable pass does not read)"
    except StateLimitError:
        return text, program, (f"{READABLE_OVER_BUDGET} {budget.limit:,} "
                               "(raise it for the readable form)")
    first, _, alphabet = text.splitlines()[:3]
    header = [first, note, alphabet]
    new_text = "\n".join(header + rewritten.lines) + "\n"
    if len(rewritten.lines) > len(program.definitions) or len(new_text) > len(text):
        # inlining can repeat a wide formula: never more text either
        return text, program, "kept as written (the rewritten form was not shorter)"
    return new_text, crasp.parse_program(new_text, filename=program.filename), "rewritten"


def format_decompile_summary(summary: dict) -> str:
    depth = f"depth        {summary['depth']}"
    if summary["depth"] < summary["layers"]:
        depth += (f" (less than the {summary['layers']} layer{'s' * (summary['layers'] != 1)}: "
                  f"the answer provably needs only {summary['depth']} nested levels of counting)")
    lines = [f"layers       {summary['layers']}",
             depth,
             f"definitions  {summary['definitions']} ({summary['comparisons']} comparisons)",
             "states       " + "; ".join(
                 ("embedding" if row["level"] == 0 else f"after layer {row['level']}")
                 + f": {row['states']} ({row['classes']} after merging)"
                 for row in summary["states"])]
    if summary["candidates"]:
        lines.append("enumerated   " + "; ".join(
            f"layer {layer}: {count} (query state, head output) pairs"
            for layer, count in enumerate(summary["candidates"], start=1)))
    by_depth: dict[int, list[str]] = {}
    for name, depth in summary["depths"].items():
        by_depth.setdefault(depth, []).append(name)
    lines += [f"depth {depth}      {', '.join(names)}" for depth, names in sorted(by_depth.items())]
    if "work" in summary:
        lines.append(f"work         {summary['work']:,} units of --max-states")
    if summary.get("readable", "").startswith(READABLE_OVER_BUDGET):
        lines.append(f"readable     no: {summary['readable']}")
    return "\n".join(lines)
