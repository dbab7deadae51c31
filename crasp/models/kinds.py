"""What a path holds: the kinds of model crasp reads, and which of them each command takes.

Recognizing a kind looks at which files a path holds, never at weights (nor torch), so a
command refuses a wrong kind before it reads any. One fact is not in a file name: a finished
``--precision`` run whose ``model/`` was removed has a float run's files, and only its
config.json's ``precision`` tells them apart (``_names_precision``). A new kind of model is a
``Kind`` here (and a module of this package with its type and loader, listed in
``registry.TYPES``); a new command that takes a model lists the kinds it accepts in
``ACCEPTS``; a command that turns one kind into another goes in ``CONVERSIONS``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from crasp.compiler.model_format import CHECKPOINT_WEIGHTS_FILE as CHECKPOINT_WEIGHTS
from crasp.compiler.model_format import WEIGHTS_FILE as FIXED_PRECISION_WEIGHTS
from crasp.errors import CraspError

# The other files that tell the kinds apart (docs/model-format.md; crasp.train.checkpoint holds
# the same name, which a test checks: importing it here would import torch).
REALIZATION_ARCHITECTURE = "model.json"
RUN_RESULTS = "results.json"   # crasp.train.results.RESULTS_FILE: a run writes it last
RUN_CONFIG = "config.json"     # crasp.train.run.CONFIG_FILE: a run's config, written first
FORMAT_MODEL_DIR = "model"     # crasp.train.run.FORMAT_MODEL_DIR: a --precision run's model
ONNX_SUFFIX = ".onnx"


@dataclass(frozen=True)
class Kind:
    """A kind of model: its name, what it is in words, the command that writes it, and whether
    a path holds one (from its file names; for a run, also its config.json's precision)."""

    name: str
    noun: str
    writer: str
    holds: Callable[[Path], bool]

    @property
    def what(self) -> str:
        return f"{self.noun} (written by {self.writer})"


FIXED_PRECISION = Kind(
    "fixed-precision", "a fixed-precision model", "crasp compile",
    lambda path: path.is_dir() and (path / FIXED_PRECISION_WEIGHTS).is_file()
    and not (path / CHECKPOINT_WEIGHTS).exists())
FLOAT_REALIZATION = Kind(
    "float-realization", "a float realization", "crasp compile --target float",
    lambda path: path.is_dir() and (path / CHECKPOINT_WEIGHTS).is_file()
    and (path / REALIZATION_ARCHITECTURE).is_file())
UNFINISHED_RUN = Kind(
    "unfinished-run", "an unfinished run", "crasp train, stopped before it wrote results.json",
    lambda path: path.is_dir() and (path / CHECKPOINT_WEIGHTS).is_file()
    and not (path / REALIZATION_ARCHITECTURE).exists() and not (path / RUN_RESULTS).exists())


def _names_precision(path: Path) -> bool:
    """Whether the run's config.json names a ``--precision`` format. A config.json that cannot
    be read says no: the path is then read as a trained run, whose reader names the damage."""
    try:
        config = json.loads((path / RUN_CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and config.get("precision") is not None


def _finished_run(path: Path) -> bool:
    """A run's files after it finished, without a fixed-precision run's format model."""
    return (path.is_dir() and (path / CHECKPOINT_WEIGHTS).is_file()
            and not (path / REALIZATION_ARCHITECTURE).exists() and (path / RUN_RESULTS).exists()
            and not (path / FORMAT_MODEL_DIR / FIXED_PRECISION_WEIGHTS).is_file())


TRAINED_RUN = Kind(
    "trained-run", "a trained run", "crasp train",
    lambda path: _finished_run(path) and not _names_precision(path))
PRECISION_RUN_WITHOUT_MODEL = Kind(
    "precision-run-without-model", "a finished --precision run without its format model",
    "crasp train --precision; its model/ since removed",
    lambda path: _finished_run(path) and _names_precision(path))
FIXED_PRECISION_RUN = Kind(
    "fixed-precision-run", "a fixed-precision run", "crasp train --precision",
    lambda path: path.is_dir() and (path / CHECKPOINT_WEIGHTS).is_file()
    and (path / RUN_RESULTS).exists()
    and (path / FORMAT_MODEL_DIR / FIXED_PRECISION_WEIGHTS).is_file())
ONNX_GRAPH = Kind(
    "onnx", "an ONNX graph", "crasp export",
    lambda path: path.is_file() and path.suffix.lower() == ONNX_SUFFIX)

KINDS = (FIXED_PRECISION, FLOAT_REALIZATION, UNFINISHED_RUN, TRAINED_RUN,
         PRECISION_RUN_WITHOUT_MODEL, FIXED_PRECISION_RUN, ONNX_GRAPH)
"""At most one holds for any path. An unfinished run is one kind whether it trains a float model
or ``--precision``: its files have the same names until it finishes. A ``--precision`` run
without its format model is read by no command: ``crasp train --resume`` writes the model
again (its best weights are R of a float model's, which no float reader may take for them)."""

RUNNABLE = (FIXED_PRECISION, FLOAT_REALIZATION, TRAINED_RUN, FIXED_PRECISION_RUN)
ACCEPTS: dict[str, tuple[Kind, ...]] = {
    "run --model": RUNNABLE,
    "eval": RUNNABLE,
    "decompile": (FIXED_PRECISION, FIXED_PRECISION_RUN),
    "extract": (TRAINED_RUN,),
    "analyze": (TRAINED_RUN,),
    "train --init-from": (TRAINED_RUN, FLOAT_REALIZATION),
}
"""Every command that takes a model, and the kinds it accepts (the first is what it expects when
a path is none of them: its reader then says what is missing). ``crasp export`` declares its
kinds per format, in ``crasp.export.FORMATS``."""

REWRITE_FORMAT_MODEL = ("crasp train --resume RUN writes its format model (RUN/model) again "
                        "from the run's best weights")
CONVERSIONS: dict[tuple[str, str], str] = {
    (TRAINED_RUN.name, FIXED_PRECISION.name):
        "extract a program from it instead: crasp extract RUN -o PROG.crasp (it quantizes the "
        "run and reports the program's fidelity), or train in the format's class: crasp train "
        "--precision P.S",
    (FIXED_PRECISION_RUN.name, TRAINED_RUN.name):
        "decompile it exactly instead: crasp decompile RUN -o PROG.crasp",
    (FLOAT_REALIZATION.name, FIXED_PRECISION.name):
        "compile the program it realizes instead: crasp compile PROG -o DIR",
    (FIXED_PRECISION.name, FLOAT_REALIZATION.name):
        "realize its program in float instead: crasp compile PROG --target float "
        "--max-length N -o DIR (or crasp train --init-from compiled)",
    **{(ONNX_GRAPH.name, target.name): "give the model directory it was exported from"
       for target in RUNNABLE},
    **{(UNFINISHED_RUN.name, target.name): "finish it first: crasp train --resume RUN (a "
       "float run becomes a trained run, a --precision run a fixed-precision run)"
       for target in RUNNABLE},
    **{(PRECISION_RUN_WITHOUT_MODEL.name, target.name): REWRITE_FORMAT_MODEL
       for target in RUNNABLE},
    (PRECISION_RUN_WITHOUT_MODEL.name, TRAINED_RUN.name):
        f"{REWRITE_FORMAT_MODEL}, then decompile it exactly: crasp decompile RUN -o PROG.crasp",
}
"""(from kind, to kind) -> how a person gets the latter from the former."""


def recognize(path: str | Path) -> Kind | None:
    """The kind of model at ``path``, or None when it holds none (absent, empty, other files)."""
    place = Path(path)
    return next((kind for kind in KINDS if kind.holds(place)), None)


class WrongKindError(CraspError):
    """A command was given a kind of model it does not take."""


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def wrong_kind(path: str | Path, kind: Kind, reader: str,
               accepts: tuple[Kind, ...]) -> WrongKindError:
    """One message: what ``path`` is, which kinds ``reader`` (``crasp decompile``, say) takes,
    and how to convert."""
    ways = [CONVERSIONS[kind.name, target.name] for target in accepts
            if (kind.name, target.name) in CONVERSIONS]
    convert = ways[0] if ways else (f"no crasp command turns {kind.noun} into "
                                    f"{_listed([target.noun for target in accepts])} yet")
    return WrongKindError(f"{path} is {kind.what}; {reader} takes "
                          f"{_listed([target.what for target in accepts])}; {convert}")
