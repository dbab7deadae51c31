"""Float realization: a program's compiled transformer without rounding, certified exact up to
a length N (``crasp compile --target float``, ``crasp train --init-from compiled``).

    realization  program         -> float weights and their certificate  (realization.py)
    checkpoint   float weights   -> the trainer's checkpoint directory    (checkpoint.py)
    measure      checkpoint      -> first failing length beyond N; the driver of
                                    ``crasp compile --target float``       (measure.py)

It imports the compiler's passes and the trainer's model class (``crasp.train.model``, its
config and run files, and ``crasp.train.checkpoint``, which reads checkpoints back); the
trainer's loop imports it only to start from a realization (``crasp.train.init``).
"""

from crasp.realize.realization import FloatRealization, realize_float

__all__ = ["FloatRealization", "realize_float"]
