"""Report pass 2: the theory's depths and each language's compiled reference program, scored on
the cells' own test bins (compiled once per language and data settings, cached by program hash
in the report's own directory: a report never writes into the sweeps it reads).

Every failure a user's languages or programs can cause (an unknown name, a program that does not
parse or compile, data settings the generator refuses, an unreadable file) is a ``CraspError`` or
an ``OSError``; those become the entry's ``status`` and the report goes on. Anything else is a
bug in crasp and is raised.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from crasp import depth_of
from crasp.compiler import compile_program, execute
from crasp.errors import CraspError
from crasp.languages import Language, build_task, get_language
from crasp.languages.datasets import parse_test_bin
from crasp.syntax import Program
from crasp.train.config import test_bin_name
from crasp.util.progress import progress_bar
from crasp.train.report.loading import CellResult
from crasp.train.report.ordering import language_sort_key
from crasp.train.sweep import canonical_json, parse_bin, read_json

# The data-generation settings of a cell: the compiled model is evaluated on the same bins.
DATA_FIELDS = ("train_bin", "test_bins", "n_train", "n_test", "val_fraction", "seed", "data_seed",
               "dialect")
# Those without which the test bins cannot be rebuilt.
REQUIRED_DATA_FIELDS = ("train_bin", "test_bins", "n_train", "n_test", "seed")
COMPILED_CACHE = "compiled_cache.json"

CompiledFn = Callable[[str, Mapping], dict]


def theory_depth(language: str, recorded: int | None = None) -> int | None:
    """The depth the theory predicts for the prediction task on ``language``.

    The language registry's ``prediction_depth`` when the library knows the name; else
    ``recorded`` (the prediction depth a cell's results.json recorded); else k - 2 for L_k
    (Knee-Deep, cor:prediction_task_depth).
    """
    try:
        known = get_language(language)
    except (CraspError, OSError):  # a name this library does not know (or a missing file)
        known = None
    if known is not None:
        return None if known.prediction_depth is None else int(known.prediction_depth)
    if recorded is not None:
        return int(recorded)
    match = re.fullmatch(r"L(\d+)", language)
    if match and int(match.group(1)) >= 3:
        return int(match.group(1)) - 2
    return None


def theory_depths(cells: Sequence[CellResult]) -> dict[str, int | None]:
    recorded: dict[str, int | None] = {}
    for cell in cells:
        info = cell.results.language
        if isinstance(info, Mapping) and info.get("prediction_depth") is not None:
            recorded.setdefault(cell.language, info["prediction_depth"])
        else:
            recorded.setdefault(cell.language, None)
    return {language: theory_depth(language, value) for language, value in recorded.items()}


def _tokens(string: Any, alphabet: Sequence[str]) -> list[str]:
    if isinstance(string, str):
        if all(len(symbol) == 1 for symbol in alphabet):
            return list(string)
        return string.split()
    return [str(token) for token in string]


def compiled_exact_match(model: Any, strings: Sequence, labels: Sequence,
                         alphabet: Sequence[str], batch: int = 256) -> float:
    """Fraction of strings whose per-position compiled output equals the labels everywhere.

    Labels of length ``len(tokens) + 1`` carry the BOS position first; it is dropped.
    """
    if not strings:
        return float("nan")
    correct = 0
    for start in range(0, len(strings), batch):
        token_lists = [_tokens(s, alphabet) for s in strings[start:start + batch]]
        output = np.asarray(execute(model, token_lists).output)
        for row, (tokens, label) in enumerate(zip(token_lists, labels[start:start + batch])):
            label = np.asarray(label).astype(bool).reshape(-1)
            if len(label) == len(tokens) + 1:
                label = label[1:]
            correct += bool(len(label) == len(tokens)
                            and np.array_equal(output[row, :len(tokens)].astype(bool), label))
    return correct / len(strings)


def evaluate_compiled(language: str, config: Mapping) -> dict:
    """Compile ``language``'s reference program and score it on the cell's test bins.

    Returns ``{"status": "ok", "program", "depth", "bins": {"lo:hi": {"exact_match", "n"}},
    "all_perfect"}``, or a status of ``"no program"`` or ``"error: ..."``. Positional programs
    compile too (version-3 models: ``crasp.compiler.encodings``).
    """
    try:
        known = get_language(language, config.get("dialect", "crasp"))
        found = reference_program(known)
    except (CraspError, OSError) as error:
        return {"status": f"error: {_first_line(error)}"}
    if found is None:
        return {"status": "no program"}
    program, path, kind = found
    result: dict = {"program": path, "kind": kind}
    try:
        result["depth"] = depth_of(program)
        missing = [name for name in REQUIRED_DATA_FIELDS if name not in config]
        if missing:
            raise CraspError(f"the cells record no {', '.join(missing)}: cannot rebuild their bins")
        model = compile_program(program)
        task = build_task(known, train_bin=_bin_tuple(config["train_bin"]),
                          test_bins=[parse_test_bin(b if isinstance(b, str) else test_bin_name(b))
                                     for b in config["test_bins"]],
                          n_train=config["n_train"], n_test=config["n_test"],
                          val_fraction=config.get("val_fraction", 0.2),
                          seed=config["seed"] if config.get("data_seed") is None
                          else config["data_seed"])
        bins = {split.name: {"exact_match": compiled_exact_match(model, split.strings, split.labels,
                                                                 program.alphabet),
                             "n": len(split.strings)}
                for split in task.tests}
    except (CraspError, OSError) as error:
        return {**result, "status": f"error: {_first_line(error)}"}
    return {**result, "status": "ok", "bins": bins,
            "all_perfect": all(b["exact_match"] == 1.0 for b in bins.values())}


def _first_line(error: BaseException) -> str:
    return str(error).splitlines()[0] if str(error) else type(error).__name__


def reference_program(language: Language) -> tuple[Program, str, str] | None:
    """The language's reference program: ``(program, where, kind)`` or None.

    The prediction program (the one that solves the prediction task at the prediction depth)
    when the language has one, else the recognition program (per-position recognition also
    gives the prefix labels, at a larger depth). Programs made in code are loaded too.
    """
    for kind, reference in (("prediction", language.prediction_program),
                            ("recognition", language.program)):
        if reference is not None:
            return reference.load(), reference.origin, kind
    return None


def _bin_tuple(value: Any) -> tuple[int, int]:
    if isinstance(value, str):
        bounds = parse_bin(value)
        if bounds is None:
            raise CraspError(f"bad bin {value!r}")
        return bounds
    lo, hi = value
    return int(lo), int(hi)


def read_cache(path: Path) -> dict:
    """The compiled references cached by an earlier report at ``path`` ({} when there is
    none or it is unreadable: the cache only saves time)."""
    if not path.is_file():
        return {}
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _file_sha(path: str | None) -> str | None:
    if not path:
        return None
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def _compiled_configs(cells: Sequence[CellResult]) -> dict[str, dict]:
    """Per language, the data settings of its lowest-seed cell (the bins the models saw)."""
    chosen: dict[str, CellResult] = {}
    for cell in cells:
        current = chosen.get(cell.language)
        if current is None or (cell.seed, cell.id) < (current.seed, current.id):
            chosen[cell.language] = cell
    return {language: {k: cell.config[k] for k in DATA_FIELDS if k in cell.config}
            for language, cell in chosen.items()}


def score_references(cells: Sequence[CellResult], evaluate: CompiledFn,
                     cache: dict | None, progress: bool = False) -> dict[str, dict]:
    """language -> ``evaluate(language, data settings)`` for every language of ``cells``.

    With a ``cache`` (a dict, as ``read_cache`` gives), a result found there under the
    language and data settings, for a program file with the same hash, is reused, and every
    new result that is not an error is added to it (the report writes it with the report)."""
    results: dict[str, dict] = {}
    languages = sorted(_compiled_configs(cells).items(),
                       key=lambda item: language_sort_key(item[0]))
    bar = (progress_bar(total=len(languages), desc="compiled references", unit="language")
           if progress else None)
    for language, config in languages:
        if bar is not None:
            bar.set_postfix_str(language, refresh=False)
            bar.update(1)
        key = canonical_json({"language": language, "data": config})
        entry = (cache or {}).get(key)
        if isinstance(entry, dict) and isinstance(entry.get("result"), dict) and \
                entry.get("program_sha") == _file_sha(entry["result"].get("program")):
            results[language] = entry["result"]
            continue
        result = evaluate(language, config)
        result.setdefault("data", config)
        results[language] = result
        if cache is not None and not str(result.get("status")).startswith("error"):
            cache[key] = {"result": result, "program_sha": _file_sha(result.get("program"))}
    if bar is not None:
        bar.close()
    return results
