"""Datasets on disk: the paper's layout and JSONL, each with a ``manifest.json``.

Paper layout (pentagonalize/CRASP_depth): ``DIR/{lo}_to_{hi}_src.txt`` and ``_tgt.txt``, one
string per line (its tokens concatenated, so every token must be one character) and its labels
as a 0/1 string of the same length (no label for BOS). The training bin's file holds the train
strings and then the validation strings, so the paper's loader, which takes the first 80% for
training, sees our split when the validation fraction is 0.2. A test bin equal to the training
bin is written as ``{lo}_to_{hi}_test_src.txt``.

JSONL layout: ``train.jsonl``, ``val.jsonl``, ``test_{lo}_to_{hi}.jsonl``; one object a line,
``{"tokens": [...], "labels": "0101"}`` (the last label says whether the whole string is in
the language).

The manifest records the language, bins, seed, counts and duplicates, and where each split
lies, so ``read_task`` gives back the same Task (a lossless round trip). ``read_paper_bins``
reads the paper's own data, which has no manifest.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from crasp.util.atomic import write_text_atomic
from crasp.errors import CraspError
from crasp.languages.datasets import Split, Task, format_bin
from crasp.util.outputs import DATASET, replace_directory
from crasp.util.safe_read import read_bytes_file, read_json_file

MANIFEST = "manifest.json"
MAX_DATA_BYTES = 8 << 30
FORMATS = ("paper", "jsonl")


def dataset_directory(root: str | Path, language: str) -> Path:
    """``root/NAME``; a program ``path/prog.crasp@dyck1`` is stored as ``prog@dyck1``."""
    base, at, parameter = language.partition("@")
    return Path(root) / (Path(base).stem + at + parameter)


def write_task(task: Task, directory: str | Path, fmt: str = "paper",
               command: str | None = None, force: bool = False) -> Path:
    """Write ``task`` into ``directory`` (files, then the manifest); returns the manifest path.

    The directory is written as a whole (``crasp.util.outputs.replace_directory``): it must be
    absent or empty, or, with ``force``, hold a crasp dataset, which is then replaced atomically
    (no stale bins beside the new manifest; a failure leaves the old dataset whole).

    >>> import tempfile
    >>> from crasp.languages import build_task
    >>> task = build_task("L3", "3:8", "9:12", n_train=20, n_test=5)
    >>> write_task(task, tempfile.mkdtemp()).name
    'manifest.json'
    """
    directory = Path(directory)
    if fmt not in FORMATS:
        raise CraspError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    repeated = {format_bin(b) for b in task.test_bins if task.test_bins.count(b) > 1}
    if repeated:
        raise CraspError(f"test bin {', '.join(sorted(repeated))} listed twice")
    long_tokens = [t for t in task.vocab if len(t) != 1]
    if fmt == "paper" and long_tokens:
        raise CraspError(f"the paper layout concatenates tokens, so every token must be one "
                         f"character; {task.language} has {', '.join(map(repr, long_tokens))}. "
                         "Use --format jsonl")
    def write(staging: Path) -> None:
        placements = (_write_paper if fmt == "paper" else _write_jsonl)(task, staging)
        manifest = {
            "language": task.language, "alphabet": list(task.vocab), "format": fmt,
            "seed": task.seed, "train_bin": format_bin(task.train_bin),
            "bins": [format_bin(task.train_bin)] + [format_bin(b) for b in task.test_bins],
            "val_fraction": task.val_fraction, "negative_rate": task.negative_rate,
            "distinct": task.distinct,
            "counts": {split.name: len(split) for split in task.splits},
            "duplicates": {split.name: split.duplicates for split in task.splits},
            "splits": [{"name": split.name, "bin": format_bin((split.lo, split.hi)),
                        "count": len(split), "duplicates": split.duplicates, **placement}
                       for split, placement in zip(task.splits, placements)],
        }
        if command:
            manifest["command"] = command
        write_text_atomic(staging / MANIFEST, json.dumps(manifest, indent=2) + "\n")

    replace_directory(directory, DATASET, force, write)
    return directory / MANIFEST


def _labels_text(labels: np.ndarray) -> str:
    return (np.asarray(labels, dtype=np.uint8) + ord("0")).tobytes().decode("ascii")


def _write_paper(task: Task, directory: Path) -> list[dict]:
    train_stem = _paper_stem(task.train_bin)
    groups = {train_stem: [task.train, task.val]}
    for split in task.tests:
        stem = _paper_stem((split.lo, split.hi))
        if stem == train_stem:
            stem += "_test"
        groups[stem] = [split]
    placements = []
    for stem, splits in groups.items():
        first_line = 0
        for split in splits:
            placements.append({"src": f"{stem}_src.txt", "tgt": f"{stem}_tgt.txt",
                               "first_line": first_line})
            first_line += len(split)
        strings = [s for split in splits for s in split.strings]
        labels = [label for split in splits for label in split.labels]
        write_text_atomic(directory / f"{stem}_src.txt",
                          "".join("".join(s) + "\n" for s in strings))
        write_text_atomic(directory / f"{stem}_tgt.txt",
                          "".join(_labels_text(label) + "\n" for label in labels))
    return placements


def _paper_stem(bin_) -> str:
    return f"{bin_[0]}_to_{bin_[1]}"


def _jsonl_name(split: Split) -> str:
    return f"{split.name}.jsonl" if split.name in ("train", "val") else \
        f"test_{split.lo}_to_{split.hi}.jsonl"


def _write_jsonl(task: Task, directory: Path) -> list[dict]:
    placements = []
    for split in task.splits:
        name = _jsonl_name(split)
        lines = [json.dumps({"tokens": tokens, "labels": _labels_text(labels)})
                 for tokens, labels in zip(split.strings, split.labels)]
        write_text_atomic(directory / name, "".join(line + "\n" for line in lines))
        placements.append({"file": name})
    return placements


# ---------------------------------------------------------------------------- reading

def read_task(directory: str | Path) -> Task:
    """The Task written by ``write_task`` into ``directory``; a manifest that is not a regular
    file, too large, or not of the shape ``write_task`` writes is a ``CraspError`` naming it.

    >>> import tempfile
    >>> from crasp.languages import build_task
    >>> task = build_task("L3", "3:8", "9:12", n_train=20, n_test=5)
    >>> read_task(write_task(task, tempfile.mkdtemp()).parent).train.strings == task.train.strings
    True
    """
    directory = Path(directory)
    manifest = read_json_file(directory / MANIFEST)
    if not DATASET.recognise(manifest):
        raise CraspError(f"{directory / MANIFEST} is not a crasp dataset manifest (it needs "
                         f"'language', 'splits', 'bins' and 'format': paper or jsonl)")
    try:
        vocab = tuple(manifest["alphabet"])
        splits = [_read_split(directory, entry, manifest["format"], vocab)
                  for entry in manifest["splits"]]
        bins = [tuple(int(v) for v in b.split(":")) for b in manifest["bins"]]
        return Task(language=manifest["language"], vocab=vocab, train=splits[0],
                    val=splits[1], tests=splits[2:], seed=manifest["seed"], train_bin=bins[0],
                    val_fraction=manifest["val_fraction"],
                    negative_rate=manifest["negative_rate"], distinct=manifest["distinct"],
                    test_bins=bins[1:])
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as error:
        raise CraspError(f"{directory / MANIFEST}: malformed manifest ({type(error).__name__}: "
                         f"{error})") from None


def _read_split(directory: Path, entry: dict, fmt: str, vocab: tuple[str, ...]) -> Split:
    lo, hi = (int(v) for v in entry["bin"].split(":"))
    count = entry["count"]
    if fmt == "paper":
        first = entry["first_line"]
        strings = _lines(directory / entry["src"])[first:first + count]
        targets = _lines(directory / entry["tgt"])[first:first + count]
        tokens = [list(s) for s in strings]
        labels = [_parse_labels(t) for t in targets]
    else:
        records = [json.loads(line) for line in _lines(directory / entry["file"])]
        tokens = [record["tokens"] for record in records]
        labels = [_parse_labels(record["labels"]) for record in records]
    if len(tokens) != count:
        raise CraspError(f"{directory}: split {entry['name']} should hold {count} strings, "
                         f"found {len(tokens)}")
    return Split(entry["name"], lo, hi, tokens, labels, duplicates=_duplicates(tokens))


def read_paper_bins(directory: str | Path) -> list[Split]:
    """Every ``{lo}_to_{hi}_src.txt`` / ``_tgt.txt`` pair of a paper-layout directory (the
    paper's own data has no manifest), one Split per file, in order of bins."""
    directory = Path(directory)
    splits = []
    for src in directory.glob("*_src.txt"):
        match = re.fullmatch(r"(\d+)_to_(\d+)(_test)?_src\.txt", src.name)
        if not match:
            continue
        strings = _lines(src)
        targets = _lines(src.with_name(src.name.replace("_src.txt", "_tgt.txt")))
        if len(strings) != len(targets):
            raise CraspError(f"{src}: {len(strings)} strings but {len(targets)} label lines")
        tokens = [list(s) for s in strings]
        splits.append(Split(f"{match[1]}:{match[2]}", int(match[1]), int(match[2]), tokens,
                            [_parse_labels(t) for t in targets], _duplicates(tokens)))
    return sorted(splits, key=lambda s: (s.lo, s.hi))


def _lines(path: Path) -> list[str]:
    try:
        return read_bytes_file(path, MAX_DATA_BYTES).decode("utf-8").split("\n")[:-1]
    except UnicodeDecodeError:
        raise CraspError(f"{path} is not UTF-8 text") from None


def _parse_labels(text: str) -> np.ndarray:
    if text.strip("01"):
        raise CraspError(f"bad label line {text[:40]!r}: expected a string of 0 and 1")
    return np.frombuffer(text.encode(), dtype=np.uint8) == ord("1")


def _duplicates(strings: list[list[str]]) -> int:
    return len(strings) - len({tuple(s) for s in strings})
