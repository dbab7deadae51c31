"""The compiler driver: a C-RASP program to the weights of an equivalent transformer.

    encodings  program -> positional components, --posenc checked   (encodings.py)
    linearize  program -> circuit of strict linear count tests       (linearize.py)
    schedule   circuit -> one layer per counting level, FFN stages    (schedule.py)
    allocate   layers  -> residual-stream coordinates and labels      (allocate.py)
    emit       layout  -> numpy weights + value bounds of each gadget (emit_weights.py)
    precision  bounds  -> smallest p (and s = 0)                      (precision.py)

The result is a ``CompiledModel`` in the crasp model format (``model_format.py``,
``docs/model-format.md``): a future-masked fixed-precision transformer with exactly depth(P)
layers, which agrees with the interpreter at every position of every input. A layer has one
head, plus one ALiBi head per distinct offset of its local counts (``local_heads``); a
program with positional constructs gets a version-3 model with periodic tables and slopes.
"""

from __future__ import annotations

import hashlib

from crasp import syntax
from crasp.compiler.allocate import allocate
from crasp.compiler.emit_weights import emit
from crasp.compiler.linearize import linearize
from crasp.compiler.encodings import choose_encodings
from crasp.compiler.model_config import KEYS, POSITIONAL_VERSION, VERSION, ModelConfig, Precision
from crasp.compiler.model_format import CompiledModel
from crasp.compiler.precision import choose_precision, refuse_wide_constants
from crasp.compiler.schedule import schedule
from crasp.depth import analyze
from crasp.fmt import format_program


def d_model_bound(program: syntax.Program) -> int:
    """#Boolean definitions + #comparisons + |alphabet| + 3: the residual width the
    construction of Knee-Deep App. B needs over the alphabet plus one symbol for every token
    outside it (its + 2), for comparison with the compiled ``d_model``."""
    booleans = sum(d.type == syntax.BOOL for d in program.definitions)
    comparisons = sum(isinstance(node, syntax.Compare)
                      for d in program.definitions for node in syntax.walk(d.expr))
    return booleans + comparisons + len(program.alphabet) + 3


def compile_program(program: syntax.Program, posenc: str = "auto") -> CompiledModel:
    """Compile a checked program with the positional encoding ``posenc`` (``encodings``;
    raises ``ProgramError`` for a construct that encoding cannot realize).

    >>> import crasp
    >>> model = compile_program(crasp.load_program(crasp.example("majority")))
    >>> model.config["vocab"], model.config["n_layers"]
    (['a', 'b'], 1)
    """
    encodings = choose_encodings(program, posenc)
    plan = schedule(linearize(program))
    refuse_wide_constants(plan, program.filename)
    layout = allocate(plan, encodings)
    weights = emit(plan, layout)
    precision = choose_precision(weights.bounds, program.filename)
    circuit = plan.linearized.circuit
    report = analyze(program)
    layer_table = [{
        "layer": layer.layer,
        "definitions": [d.name for d in report.definitions if d.used and d.depth == layer.layer],
        "tests": [circuit.describe_test(test) for test in layer.tests],
        "ffn_widths": widths,
    } for layer, widths in zip(plan.layers, weights.ffn_widths)]
    source = program.source or format_program(program)
    positional = {"version": POSITIONAL_VERSION, "periodic_moduli": encodings.moduli,
                  "alibi": bool(encodings.local_period), "posenc": encodings.posenc,
                  "tl_pos_depth": report.tl_pos_depth, "order": KEYS}
    if not encodings.positional:
        positional = {"version": VERSION}
    config = ModelConfig(
        **positional,
        vocab=tuple(program.alphabet),
        bos_id=len(program.alphabet),
        other_id=len(program.alphabet) + 1,
        d_model=layout.d_model,
        n_layers=len(plan.layers),
        n_heads=weights.n_heads,
        d_head=weights.d_head,
        ffn_widths=tuple(map(tuple, weights.ffn_widths)),
        precision=Precision(precision.total_bits, precision.frac_bits),
        precision_set_by=f"{precision.widest.what}, in [{precision.widest.low}, "
                         f"{precision.widest.high}]",
        depth=plan.depth,
        residual_labels=tuple(layout.labels),
        program_sha256=hashlib.sha256(source.encode("utf-8")).hexdigest(),
        program_file=program.filename,
        answer=program.answer.name,
        d_model_bound=d_model_bound(program) + (
            sum(encodings.moduli) + len(layout.mixed) + len(plan.linearized.circuit.locals())
            if encodings.positional else 0),
        layer_table=layer_table,
    )
    return CompiledModel(config.to_json(), weights.tensors)
