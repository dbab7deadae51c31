"""``load_model``: the one reader of every kind of model, for every command.

Every command that takes a model calls ``load_model(path, command)``: the path's kind is
recognized from its files (``kinds.recognize``), refused with one message when the command does
not take it (``kinds.ACCEPTS``), and read by its type's loader (``LOADERS``) otherwise.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol

from crasp.api_inputs import Inputs
from crasp.models.fixed_precision import FixedPrecisionModel
from crasp.models.fixed_precision_run import FixedPrecisionRun
from crasp.models.float_realization import FloatRealizationModel
from crasp.models.kinds import ACCEPTS, KINDS, Kind, recognize, wrong_kind
from crasp.models.trained_run import TrainedRun

if TYPE_CHECKING:
    from crasp.compiler.executor import ModelEvaluation


class Model(Protocol):
    """What every type of model offers: its kind and path, its vocabulary and layer count, its
    decisions on inputs (as ``crasp run --model`` reads them) and a line describing it;
    ``executable`` is what ``crasp.compiler.execute`` runs."""

    kind: ClassVar[Kind]
    path: str
    executable: Any

    @property
    def vocab(self) -> tuple[str, ...]: ...

    @property
    def n_layers(self) -> int: ...

    def predict(self, inputs: Inputs) -> ModelEvaluation: ...

    def describe(self) -> str: ...


TYPES: tuple[type, ...] = (FixedPrecisionModel, FloatRealizationModel, TrainedRun,
                           FixedPrecisionRun)
LOADERS: dict[str, Callable[[str], Model]] = {model.kind.name: model.load for model in TYPES}
"""Kind name -> the loader of its type. An ONNX graph is recognized (so that a command given one
says so) but read by no crasp command: it is an export."""

READABLE = tuple(kind for kind in KINDS if kind.name in LOADERS)


def check_kind(path: str | Path, command: str | None = None,
               accepts: tuple[Kind, ...] | None = None) -> Kind:
    """The kind ``load_model`` reads ``path`` as, for ``crasp command`` (a key of
    ``kinds.ACCEPTS``; ``accepts`` overrides its kinds) or, without a command, any readable kind:
    the path's kind, or the first accepted kind when the path holds none (its reader then says
    what is missing). A kind the command does not take raises ``WrongKindError``. Commands with
    a reader of their own (``crasp analyze`` rebuilds the run's data too) call this first."""
    allowed = accepts or (ACCEPTS[command] if command else READABLE)
    kind = recognize(path)
    if kind is None:
        return allowed[0]
    if kind not in allowed:
        raise wrong_kind(path, kind, f"crasp {command}" if command else "crasp.models.load_model",
                         allowed)
    return kind


def load_model(path: str | Path, command: str | None = None,
               accepts: tuple[Kind, ...] | None = None) -> Model:
    """The model at ``path`` as the type of its kind, for ``crasp command`` (a key of
    ``kinds.ACCEPTS``; ``accepts`` overrides its kinds) or, without a command, any readable kind.
    Raises ``WrongKindError`` for a kind the command does not take (``check_kind``), and the
    reader's ``CraspError`` for a model it cannot read.

    >>> import crasp, tempfile
    >>> from crasp.compiler import compile_program
    >>> directory = f"{tempfile.mkdtemp()}/dyck1.model"
    >>> compile_program(crasp.load_program(crasp.example("dyck1"))).save(directory)
    >>> model = load_model(directory, "decompile")
    >>> type(model).__name__, model.vocab, model.n_layers
    ('FixedPrecisionModel', ('(', ')'), 2)
    >>> model.predict(["(())", "())("]).accept.tolist()
    [True, False]
    """
    return LOADERS[check_kind(path, command, accepts).name](str(path))


def load_executable(path: str | Path):
    """What the executor runs of any readable model at ``path``: a ``CompiledModel``, or the
    ``Checkpoint`` of a trained run or a float realization. This is ``crasp.compiler.load_model``
    (``docs/api.md``).

    >>> import crasp, tempfile
    >>> from crasp.compiler import compile_program
    >>> directory = f"{tempfile.mkdtemp()}/dyck1.model"
    >>> compile_program(crasp.load_program(crasp.example("dyck1"))).save(directory)
    >>> load_executable(directory).config["vocab"]
    ['(', ')']
    """
    return load_model(path).executable
