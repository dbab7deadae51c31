"""``crasp zoo build`` and ``crasp zoo check``: a collection of compiled models with their
ground-truth circuits, laid out for interpretability benchmarks (InterpBench's layout:
weights + config + ``meta.json`` per model, one index).

    ZOO/zoo.json                 what was built (programs glob, random count, depths, seed)
    ZOO/index.csv, index.md      one row per model
    ZOO/models/NAME/program.crasp      the program
    ZOO/models/NAME/config.json        the compiled model (docs/model-format.md)
    ZOO/models/NAME/model.safetensors
    ZOO/models/NAME/meta.json          the model's summary and its circuit (ground_truth)

The models are the exact compiled models: every weight is the compiler's, so the circuit is a
fact about the weights, not an approximation. ``check`` re-verifies every model against its
program: the program's hash, the weights (recompiled, equal tensor for tensor), and the
model's decisions against the interpreter at every position of every string up to length
``CHECK_LENGTH`` (at most ``CHECK_PER_LENGTH`` per length) and of random long strings.
"""

from __future__ import annotations

import csv
import fnmatch
import hashlib
import io
import json
from pathlib import Path

import numpy as np

import crasp
from crasp import syntax
from crasp.compiler import compile_program, execute, load_model
from crasp.errors import CraspError, ProgramError
from crasp.languages.programs import PROGRAMS_DIR
from crasp.util.outputs import COMPILED_MODEL, OutputKind, replace_directory
from crasp.util.progress import progress_bar
from crasp.zoo.ground_truth import ground_truth
from crasp.zoo.random_programs import random_program

MODEL_FILES = ("program.crasp", "meta.json") + COMPILED_MODEL.written
ZOO = OutputKind("zoo", "zoo.json",
                 lambda value: isinstance(value, dict) and value.get("format") == "crasp-zoo",
                 written=("zoo.json", "index.csv", "index.md")
                 + tuple(f"models/*/{name}" for name in MODEL_FILES))
CHECK_LENGTH = 8
CHECK_PER_LENGTH = 512
LONG_STRINGS, LONG_LENGTH = 8, 200
MAX_ATTEMPTS = 1000
COLUMNS = ("name", "source", "family", "depth", "layers", "d_model", "params",
           "definitions", "circuit_nodes", "circuit_edges", "vocab")


def family(name: str) -> str:
    for prefix, label in (("L", "L_k"), ("E", "E_k"), ("dyck", "Dyck")):
        rest = name[len(prefix):].split("_")[0]
        if name.startswith(prefix) and (prefix == "dyck" or rest.isdigit()):
            return label
    return "other"


def parse_depths(text: str) -> tuple[int, int]:
    """``"1:6"`` -> (1, 6); ``"3"`` -> (3, 3)."""
    try:
        low, _, high = text.partition(":")
        bounds = (int(low), int(high or low))
    except ValueError:
        raise CraspError(f"--depths must be LOW:HIGH (e.g. 1:6), got {text!r}") from None
    if not 1 <= bounds[0] <= bounds[1]:
        raise CraspError(f"--depths must satisfy 1 <= LOW <= HIGH, got {text!r}")
    return bounds


def _every_boolean_varies(program) -> bool:
    """Whether every Boolean definition takes both values at the positions of the non-empty
    strings up to length 6 (else part of a random program is a constant, and the circuit
    would hold nodes no ablation can show)."""
    import itertools
    strings = [list(s) for n in range(1, 7)
               for s in itertools.product(program.alphabet, repeat=n)]
    trace = crasp.evaluate(program, strings).trace
    for definition in program.definitions:
        if definition.type == syntax.BOOL:
            values = np.concatenate([np.asarray(trace[definition.name][row][:len(string)])
                                     for row, string in enumerate(strings)])
            if values.all() or not values.any():
                return False
    return True


def collect(programs_glob: str, random_count: int, depths: tuple[int, int], seed: int,
            progress: bool = False) -> tuple[list[tuple[str, str, str]], list[str]]:
    """(name, source kind, program text) of every model, and the reference programs skipped
    (those the compiler refuses, and positional ones, named with the reason)."""
    chosen, skipped = [], []
    for path in sorted(PROGRAMS_DIR.glob("*.crasp")):
        if not fnmatch.fnmatch(path.stem, programs_glob):
            continue
        try:
            model = compile_program(crasp.load_program(path))
        except ProgramError as error:
            reason = str(error).splitlines()[0].split("error: ")[-1]
            skipped.append(f"{path.stem} ({reason})")
            continue
        if model.spec.periodic_moduli or model.spec.alibi:   # ground_truth reads NoPE circuits
            skipped.append(f"{path.stem} (positional: the zoo's circuits cover NoPE models)")
            continue
        chosen.append((path.stem, "reference", path.read_text()))
    low, high = depths
    for index in progress_bar(iterable=range(random_count), desc="random programs",
                              unit="program", disable=not progress):
        depth = low + index % (high - low + 1)
        for attempt in range(MAX_ATTEMPTS):   # a program with a constant part is passed over
            text = random_program(seed * 1_000_003 + index * 1_009 + attempt, depth)
            if _every_boolean_varies(crasp.parse_program(text)):
                break
        chosen.append((f"random_d{depth}_{index:03d}", "random", text))
    return chosen, skipped


def build_zoo(output: str | Path, programs_glob: str = "*", random_count: int = 0,
              depths: tuple[int, int] = (1, 6), seed: int = 0, force: bool = False,
              progress: bool = False) -> dict:
    """Compile the collection into ``output`` atomically; return ``zoo.json``'s object."""
    chosen, skipped = collect(programs_glob, random_count, depths, seed, progress)
    if not chosen:
        raise CraspError(f"no program matches --programs {programs_glob!r} and --random is 0: "
                         f"the zoo would be empty")
    rows, entries = [], []
    for name, kind, text in progress_bar(iterable=chosen, desc="compiled", unit="model",
                                         disable=not progress):
        program = crasp.parse_program(text, filename=f"{name}.crasp")
        model = compile_program(program)
        circuit = ground_truth(program)
        row = {"name": name, "source": kind,
               "family": family(name) if kind == "reference" else "random",
               "depth": model.config["depth"], "layers": model.n_layers,
               "d_model": model.config["d_model"], "params": model.params,
               "definitions": len(program.definitions), "circuit_nodes": len(circuit["nodes"]),
               "circuit_edges": len(circuit["edges"]), "vocab": " ".join(program.alphabet)}
        rows.append(row)
        meta = {**row, "vocab": list(program.alphabet),
                "program_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "residual_labels": model.config["residual_labels"],
                "ffn_widths": model.config["ffn_widths"], "circuit": circuit}
        entries.append((name, text, model, meta))
    summary = {"format": "crasp-zoo", "version": 1, "programs": programs_glob,
               "random": random_count, "depths": list(depths), "seed": seed,
               "models": [row["name"] for row in rows], "skipped": skipped}

    def write(staging: Path) -> None:
        for name, text, model, meta in entries:
            place = staging / "models" / name
            model.save(place)
            (place / "program.crasp").write_text(text)
            (place / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        (staging / "index.csv").write_text(index_csv(rows))
        (staging / "index.md").write_text(index_markdown(rows))
        (staging / "zoo.json").write_text(json.dumps(summary, indent=2) + "\n")
    replace_directory(output, ZOO, force, write)
    return summary


def index_csv(rows: list[dict]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def index_markdown(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(str(row[c]) for c in COLUMNS) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def check_model(place: Path, seed: int = 0) -> str | None:
    """None if the model in ``place`` is its program's compiled model and agrees with the
    interpreter everywhere ``check`` looks (module docstring), else what is wrong."""
    from crasp.zoo.strings import check_strings

    text = (place / "program.crasp").read_text()
    meta = json.loads((place / "meta.json").read_text())
    if meta.get("program_sha256") != hashlib.sha256(text.encode("utf-8")).hexdigest():
        return "meta.json's program_sha256 is not the hash of program.crasp"
    program = crasp.parse_program(text, filename=str(place / "program.crasp"))
    model = load_model(place)
    expected = compile_program(program)
    for name, tensor in expected.tensors.items():
        if name not in model.tensors or not np.array_equal(model.tensors[name], tensor):
            return f"tensor {name!r} is not what program.crasp compiles to"
    strings = check_strings(list(program.alphabet), CHECK_LENGTH, CHECK_PER_LENGTH,
                            LONG_STRINGS, LONG_LENGTH, seed)
    got = execute(model, strings)
    want = crasp.evaluate(program, strings)
    if not (np.array_equal(got.output, want.output) and np.array_equal(got.accept,
                                                                       want.accept)):
        row = int(np.argmax((got.output != want.output).any(axis=1)
                            | (got.accept != want.accept)))
        return f"disagrees with the interpreter on {' '.join(strings[row]) or 'the empty input'}"
    return None


def zoo_models(zoo: str | Path) -> list[str]:
    """The names of the models the zoo's ``zoo.json`` lists, or ``CraspError`` saying that
    ``zoo`` is not a zoo."""
    marker = Path(zoo) / ZOO.marker
    if not marker.is_file():
        raise CraspError(f"{zoo} is not a zoo (no zoo.json); build one with crasp zoo build")
    try:
        names = json.loads(marker.read_text(encoding="utf-8"))["models"]
        if not all(isinstance(name, str) for name in names):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise CraspError(f"{marker} is not a zoo.json written by crasp zoo build") from None
    return names


def check_zoo(zoo: str | Path, progress: bool = False) -> list[tuple[str, str | None]]:
    """(name, problem or None) for every model the zoo's ``zoo.json`` lists."""
    root = Path(zoo)
    names = zoo_models(root)
    results = []
    for name in progress_bar(iterable=names, desc="checked", unit="model", disable=not progress):
        place = root / "models" / name
        try:
            results.append((name, check_model(place)))
        except (CraspError, OSError, ValueError, KeyError) as error:
            results.append((name, f"cannot be read: {error}"))
    return results
