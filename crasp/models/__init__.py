"""Every kind of model crasp reads, one type each, behind one loader.

    kinds.py             what a path holds (from its file names and a run's precision), which kinds
                         each command takes, and the commands that convert one kind into another
    registry.py          ``load_model(path, command)``, ``check_kind`` (the kind it reads,
                         or one message) and the ``Model`` protocol
    executable.py        what the types share: vocab, n_layers, predict (the executor)
    fixed_precision.py   ``FixedPrecisionModel``    (crasp compile)
    trainer_checkpoint.py  what the two checkpoints of the trainer's model class share:
    float_realization.py ``FloatRealizationModel``  (crasp compile --target float)
    trained_run.py       ``TrainedRun``             (crasp train)
    fixed_precision_run.py ``FixedPrecisionRun``    (crasp train --precision P.S)

Every type offers ``kind``, ``path``, ``vocab``, ``n_layers``, ``predict(inputs)`` and
``describe()``. A new kind of model is a ``Kind`` in ``kinds.py``, a module here with its type,
and an entry of ``registry.TYPES``. This package imports the compiler and the trainer's
checkpoint reader (``crasp.train.checkpoint``); the commands and ``crasp.export`` import it.
"""

from crasp.models.fixed_precision import FixedPrecisionModel
from crasp.models.fixed_precision_run import FixedPrecisionRun
from crasp.models.float_realization import FloatRealizationModel
from crasp.models.kinds import ACCEPTS, KINDS, Kind, WrongKindError, recognize
from crasp.models.registry import Model, check_kind, load_model
from crasp.models.trained_run import TrainedRun

__all__ = ["ACCEPTS", "KINDS", "FixedPrecisionModel", "FixedPrecisionRun",
           "FloatRealizationModel", "Kind", "Model",
           "TrainedRun", "WrongKindError", "check_kind", "load_model", "recognize"]
