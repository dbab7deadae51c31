"""Decompiler: fixed-precision transformers back to C-RASP programs of the same depth.

The driver (``decompiling.py``) reads as the pipeline; one module per pass, each named for what
it does:

    enumerate_states  model   -> residual states after every layer, exact attention and
                                 feed-forward tables on them         (enumerate_states.py)
    classify          states  -> classes no later layer tells apart  (classify.py)
    write_program     classes -> one Boolean per class, one comparison per head-output
                                 threshold                           (write_program.py)
    vocabulary        program -> the same answers on the strings of the model's
                                 tokens only, shrunk (--vocabulary-only; vocabulary.py)
    readable          program -> the same answers in fewer, minimized, named
                                 definitions                         (readable.py)

``budget.py`` is the work budget (``--max-states``) the passes charge before they work;
``cli.py`` is ``crasp decompile``. The decompiler imports the compiler (the model format and the
executor) and the language core, never the trainer; ``docs/decompile.md`` has the derivation.
"""

from crasp.decompile.decompiling import Decompilation, decompile_model, format_decompile_summary

__all__ = ["Decompilation", "decompile_model", "format_decompile_summary"]
