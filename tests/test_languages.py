"""The language library: oracles against reference programs, generators, prefix labels,
datasets (seeds, splits, disjointness, impossible requests), storage round trips and the CLI."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
from functools import lru_cache

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

import crasp
from crasp.cli import cli
from crasp.errors import CraspError, InputError
from crasp.languages import (LANGUAGES, build_task, get_language, read_paper_bins, read_task,
                             write_task)
from crasp.languages import datasets
from crasp.languages.cli import generate_command, languages_command
from crasp.languages.programs import PROGRAMS_DIR, shipped_programs

EXHAUSTIVE_LENGTH = {2: 12, 3: 10}
"""Longest positive strings enumerated for the prediction-task check, by alphabet size."""

ORACLE_CHECK_LENGTH = 12
"""Oracle against reference program: every string up to this length (ternary alphabets:
531,441 strings a program, a few seconds each)."""

WITH_PROGRAM = [name for name, lang in LANGUAGES.items() if lang.program is not None]
WITH_PREDICTION_PROGRAM = [name for name, lang in LANGUAGES.items()
                           if lang.prediction_program is not None]
EXTRA_NAMES = ["L15", "E4@0.2", "E2@0"]
ALL_NAMES = list(LANGUAGES) + EXTRA_NAMES


@lru_cache(maxsize=None)
def all_strings(alphabet: tuple[str, ...], length: int) -> list[tuple[str, ...]]:
    return list(itertools.product(alphabet, repeat=length))


def runs(word: str) -> list[str]:
    return [m.group() for m in re.finditer(r"(.)\1*", word)]


# ---------------------------------------------------------------------------- programs

def test_shipped_programs_equal_the_generated_text():
    for file_name, text in shipped_programs():
        path = PROGRAMS_DIR / file_name
        assert path.exists(), (f"{path} is missing: run "
                               "crasp.languages.write_programs(\"crasp/programs\")")
        assert path.read_text() == text, f"{path} differs from the generated program"


@pytest.mark.parametrize("name", WITH_PROGRAM + ["L15", "E9"])
def test_reference_programs_have_the_registered_depths(name):
    lang = get_language(name)
    program = lang.program.load()
    assert program.alphabet == lang.alphabet
    if lang.expressible:
        assert crasp.depth_of(program) == lang.recognition_depth
    else:  # (aa)*: a C-RASP[periodic] program, no depth in plain C-RASP
        assert lang.recognition_depth is None and program.imports
    if lang.prediction_program is not None:
        assert crasp.depth_of(lang.prediction_program.load()) == lang.prediction_depth


@pytest.mark.parametrize("name", ALL_NAMES + ["memory-or-1-3"])
def test_every_program_of_a_language_reads_the_same_in_hahns_dialect(name):
    """Each of a language's programs (its own, the prediction task's, the prefixes') parses
    alike in Hahn's dialect: no precedence warning (crasp.hahn)."""
    from crasp.hahn import precedence_warnings
    lang = get_language(name)
    for reference in (lang.program, lang.prediction_program, lang.prefixes_program):
        if reference is not None:
            assert precedence_warnings(crasp.parse_program(reference.source)) == [], name


def check_oracle_against_program(name: str, max_length: int) -> None:
    """Evaluate the program once on every string of length ``max_length``: its answer at
    position m - 1 is its answer on the prefix of length m, so the rows spaced s^(N-m) apart
    hold every string of length m in lexicographic order."""
    lang = get_language(name)
    program = lang.program.load()
    strings = all_strings(lang.alphabet, max_length)
    output = crasp.evaluate(program, strings).output
    assert crasp.evaluate(program, [[]]).accept[0] == lang.contains([]), "empty string"
    size = len(lang.alphabet)
    for length in range(1, max_length + 1):
        answers = output[::size ** (max_length - length), length - 1]
        expected = [lang.oracle(s) for s in all_strings(lang.alphabet, length)]
        wrong = [("".join(s), bool(a)) for s, a, e in
                 zip(all_strings(lang.alphabet, length), answers, expected) if a != e]
        assert not wrong, f"{name}: program and oracle disagree on {wrong[:5]}"


@pytest.mark.parametrize("name", WITH_PROGRAM)
def test_oracle_agrees_with_reference_program_on_all_short_strings(name):
    check_oracle_against_program(name, ORACLE_CHECK_LENGTH)


@pytest.mark.parametrize("name", WITH_PREDICTION_PROGRAM)
def test_prediction_program_solves_the_prediction_task(name):
    """On every prefix of every positive string up to the exhaustive length, and of 200
    generated longer ones, the prediction program's answer is the prefix label."""
    lang = LANGUAGES[name]
    program = lang.prediction_program.load()
    max_length = EXHAUSTIVE_LENGTH[len(lang.alphabet)]
    positives = [list(s) for n in range(1, max_length + 1)
                 for s in all_strings(lang.alphabet, n) if lang.oracle(s)]
    rng = np.random.default_rng(0)
    lengths = lang.lengths_in(max_length, max_length + 40)
    positives += [lang.sample(int(rng.choice(lengths)), rng) for _ in range(200)]
    output = crasp.evaluate(program, positives).output
    for row, tokens in enumerate(positives):
        expected = lang.prefix_labels(tokens)
        assert np.array_equal(output[row, :len(tokens)], expected), "".join(tokens)


# ---------------------------------------------------------------------------- generators

@settings(max_examples=300)
@given(name=st.sampled_from(ALL_NAMES), length=st.integers(0, 60), seed=st.integers(0, 2**32))
def test_samples_are_positive_strings_of_the_requested_length(name, length, seed):
    lang = get_language(name)
    rng = np.random.default_rng(seed)
    if lang.support_size(length) == 0:
        with pytest.raises(CraspError, match="has no string of length"):
            lang.sample(length, rng)
        return
    tokens = lang.sample(length, rng)
    assert len(tokens) == length and set(tokens) <= set(lang.alphabet)
    assert lang.contains(tokens)
    if name[0] in "LE":  # block structure, checked without the oracle
        k = int(re.match(r"[LE](\d+)", name)[1])
        letters = "".join(tokens).replace("e", "")
        assert letters.startswith("a") and len(runs(letters)) == k


def draws(name: str, length: int, count: int, seed: int = 0) -> dict[str, int]:
    lang = get_language(name)
    rng = np.random.default_rng(seed)
    seen: dict[str, int] = {}
    for _ in range(count):
        word = "".join(lang.sample(length, rng))
        seen[word] = seen.get(word, 0) + 1
    return seen


@pytest.mark.parametrize("name, length", [
    ("L3", 7), ("L5", 8), ("E2", 5), ("E3@0.3", 6), ("dyck1", 8), ("dyck2", 10), ("anbn", 6),
    ("anbncn", 6), ("majority", 6), ("contains_ab", 5), ("parity", 5), ("aa_star", 6)])
def test_generator_covers_exactly_the_positive_strings(name, length):
    """Sampling reaches every positive string of the length and nothing else, and the support
    size the dataset builder relies on is the number of positive strings."""
    lang = get_language(name)
    positives = {"".join(s) for s in all_strings(lang.alphabet, length) if lang.oracle(s)}
    assert lang.support_size(length) == len(positives)
    assert set(draws(name, length, 20 * len(positives) + 200)) == positives


@pytest.mark.parametrize("name, length", [("L4", 7), ("dyck1", 8), ("dyck2", 10),
                                          ("majority", 5), ("contains_ab", 4), ("parity", 5)])
def test_uniform_generators_are_uniform(name, length):
    """Every positive string appears with frequency 1/|support| (within 5 standard errors)."""
    size = get_language(name).support_size(length)
    count = 400 * size
    frequencies = np.array(list(draws(name, length, count).values()))
    expected = count / size
    assert len(frequencies) == size
    assert np.all(np.abs(frequencies - expected) < 5 * np.sqrt(expected))


@pytest.mark.parametrize("length", [3, 30, 300])
def test_neutral_letter_rate_is_the_share_of_e(length):
    lang = get_language("E3@0.3")
    rng = np.random.default_rng(1)
    share = np.mean([lang.sample(length, rng).count("e") / length for _ in range(1000)])
    truncation = length < 10  # at least 3 letters: few e's fit in short strings
    assert share < 0.3 if truncation else abs(share - 0.3) < 0.02
    assert get_language("E3@0").sample(length, rng).count("e") == 0


@settings(max_examples=300)
@given(data=st.data(), name=st.sampled_from(ALL_NAMES))
def test_prefix_labels_match_the_oracle_on_every_prefix(data, name):
    """On arbitrary strings over the alphabet and on generated positives."""
    lang = get_language(name)
    if data.draw(st.booleans()):
        tokens = data.draw(st.lists(st.sampled_from(lang.alphabet), max_size=30))
    else:
        length = data.draw(st.sampled_from(lang.lengths_in(0, 40).tolist()))
        tokens = lang.sample(length, np.random.default_rng(data.draw(st.integers(0, 2**32))))
    labels = lang.prefix_labels(tokens)
    assert labels.dtype == bool and labels.shape == (len(tokens),)
    assert labels.tolist() == [lang.contains(tokens[:i + 1]) for i in range(len(tokens))]


def test_oracle_rejects_tokens_outside_the_alphabet():
    with pytest.raises(InputError, match="not in the alphabet of L3"):
        get_language("L3").contains(["a", "c"])


# ---------------------------------------------------------------------------- names

def test_names():
    assert get_language("E4").name == "E4" and get_language("E4@0.25").name == "E4@0.25"
    assert get_language("L40").recognition_depth == 40
    assert get_language("L40").prediction_depth == 38
    assert get_language("L3").program_path == PROGRAMS_DIR / "L3.crasp"
    assert get_language("L3").prediction_program_path == PROGRAMS_DIR / "L3_predict.crasp"
    assert get_language("L20").program_path is None  # generated in code
    for bad, message in [("L0", "from 1 to 100,000"), ("L100001", "from 1 to 100,000"),
                         ("E3@1.5", r"\[0, 1\)"), ("E3@x", "number"),
                         ("L3@0.1", "only E_k"), ("dyck3", "unknown language")]:
        with pytest.raises(CraspError, match=message):
            get_language(bad)


def test_trainer_contract():
    lang = get_language("L5")
    assert (lang.name, lang.alphabet, lang.expressible) == ("L5", ("a", "b"), True)
    assert (lang.recognition_depth, lang.prediction_depth) == (5, 3)
    assert isinstance(lang.note, str)
    task = build_task(lang, train_bin=(201, 250), test_bins=[(251, 300), (301, 350)],
                      n_train=100, n_test=50, val_fraction=0.2, seed=0)
    assert [s.name for s in task.splits] == ["train", "val", "251:300", "301:350"]
    assert (len(task.train), len(task.val), len(task.tests[0])) == (80, 20, 50)
    assert task.vocab == ("a", "b")
    for split in task.splits:
        for tokens, labels in zip(split.strings, split.labels):
            assert split.lo <= len(tokens) <= split.hi and labels.shape == (len(tokens),)
            assert labels[-1]  # L_k: positive strings only, as in the paper
    for name in LANGUAGES:
        assert get_language(name).name == name


def test_program_as_a_language():
    dyck = get_language("dyck1")
    lang = get_language(f"{PROGRAMS_DIR / 'dyck1.crasp'}@dyck1")
    assert lang.alphabet == ("(", ")") and lang.recognition_depth == 2
    task = build_task(lang, (1, 20), [(21, 40)], 60, 30, 0.2, 0)
    reference = build_task(dyck, (1, 20), [(21, 40)], 60, 30, 0.2, 0)
    for split, expected in zip(task.splits, reference.splits):
        assert split.strings == expected.strings  # same generator, same seeds
        assert all(np.array_equal(a, b) for a, b in zip(split.labels, expected.labels))
    uniform = get_language(str(PROGRAMS_DIR / "majority.crasp"))
    rng = np.random.default_rng(0)
    tokens = uniform.sample(9, rng)
    assert uniform.prefix_labels(tokens).tolist() == \
        LANGUAGES["majority"].prefix_labels(tokens).tolist()
    with pytest.raises(CraspError, match="lacks"):
        get_language(f"{PROGRAMS_DIR / 'majority.crasp'}@dyck1")


# ---------------------------------------------------------------------------- datasets

def keys(split) -> set[tuple[str, ...]]:
    return {tuple(s) for s in split.strings}


def test_same_seed_same_task_other_seed_other_task():
    first = build_task("E4", (10, 30), [(31, 40)], 200, 100, 0.2, seed=3)
    again = build_task("E4", (10, 30), [(31, 40)], 200, 100, 0.2, seed=3)
    other = build_task("E4", (10, 30), [(31, 40)], 200, 100, 0.2, seed=4)
    for a, b, c in zip(first.splits, again.splits, other.splits):
        assert a.strings == b.strings and a.strings != c.strings
        assert all(np.array_equal(x, y) for x, y in zip(a.labels, b.labels))
    more_bins = build_task("E4", (10, 30), [(41, 50), (31, 40)], 200, 100, 0.2, seed=3)
    assert more_bins.train.strings == first.train.strings
    assert more_bins.tests[1].strings == first.tests[0].strings


@pytest.mark.parametrize("name", ["L3", "E2", "majority", "contains_ab"])
def test_no_evaluation_string_is_a_training_string(name):
    """Short bins force many collisions; the paper's first test bin equals the training bin."""
    task = build_task(name, (1, 12), [(1, 12), (5, 20)], 300, 200, 0.25, seed=0)
    assert task.train.duplicates > 0  # the bins are small enough to collide
    assert not keys(task.train) & keys(task.val)
    for test in task.tests:
        assert not keys(test) & (keys(task.train) | keys(task.val))
        assert len(test) == 200
    assert len(task.train) + len(task.val) == 300


def test_duplicates_are_counted_and_distinct_forbids_them():
    task = build_task("L8", (1, 12), [], 400, 0, 0.2, seed=0)
    assert task.train.duplicates == len(task.train) - len(keys(task.train)) > 0
    distinct = build_task("L8", (1, 14), [], 400, 0, 0.2, seed=0, distinct=True)
    assert distinct.train.duplicates == distinct.val.duplicates == 0


def test_impossible_requests_say_what_would_work():
    # L4 has C(3,3) + C(4,3) = 5 strings of length <= 5.
    with pytest.raises(CraspError, match=r"holds only 5 distinct strings.*at most 5"):
        build_task("L4", (1, 5), [], 100, 0, 0.2, seed=0, distinct=True)
    with pytest.raises(CraspError, match="even length"):
        build_task("dyck1", (3, 3), [], 10, 0, 0.2, seed=0)
    with pytest.raises(CraspError, match="was drawn for training"):
        build_task("L3", (3, 5), [(3, 5)], 1000, 10, 0.2, seed=0)
    with pytest.raises(CraspError, match="validation"):
        build_task("aa_star", (2, 2), [], 10, 0, 0.2, seed=0)
    for bad in ["5:1", "a:b", ""]:
        with pytest.raises(CraspError, match="bin"):
            datasets.parse_bins(bad)


def test_a_draw_that_keeps_missing_gives_up(monkeypatch):
    monkeypatch.setattr(datasets, "MAX_ATTEMPTS_PER_STRING", 1)
    monkeypatch.setattr(datasets, "ATTEMPTS_SLACK", 0)
    # All 20 strings of L3 with lengths 3..6, distinct: 20 draws cannot avoid repeats.
    with pytest.raises(CraspError, match="drew only .* of 20 strings"):
        build_task("L3", (3, 6), [], 20, 0, 0.0, seed=0, distinct=True)


def test_near_miss_negatives_for_recognition():
    lang = get_language("anbn")
    task = build_task(lang, (10, 20), [], 400, 0, 0.0, seed=0, negative_rate=0.5)
    accepted = [lang.contains(s) for s in task.train.strings]
    assert 0.4 < 1 - np.mean(accepted) < 0.6
    for tokens, labels in zip(task.train.strings, task.train.labels):
        assert 10 <= len(tokens) <= 20 and labels[-1] == lang.contains(tokens)


# ---------------------------------------------------------------------------- storage

def assert_same_task(a, b):
    assert (a.language, a.vocab, a.seed, a.train_bin, a.test_bins) == \
        (b.language, b.vocab, b.seed, b.train_bin, b.test_bins)
    for x, y in zip(a.splits, b.splits, strict=True):
        assert (x.name, x.lo, x.hi, x.strings, x.duplicates) == \
            (y.name, y.lo, y.hi, y.strings, y.duplicates)
        assert all(np.array_equal(p, q) for p, q in zip(x.labels, y.labels, strict=True))


@pytest.mark.parametrize("fmt", ["paper", "jsonl"])
def test_round_trip_is_lossless(tmp_path, fmt):
    task = build_task("L3", (0, 8), [(0, 8), (9, 12)], 60, 30, 0.2, seed=0)
    write_task(task, tmp_path, fmt)
    assert_same_task(read_task(tmp_path), task)


def test_paper_layout(tmp_path):
    task = build_task("L4", (201, 250), [(251, 300)], 50, 20, 0.2, seed=0)
    write_task(task, tmp_path, "paper")
    src = (tmp_path / "201_to_250_src.txt").read_text().splitlines()
    tgt = (tmp_path / "201_to_250_tgt.txt").read_text().splitlines()
    # train first, then validation: the paper's loader takes the first 80% for training
    assert src == ["".join(s) for s in task.train.strings + task.val.strings]
    assert all(re.fullmatch("0+1+", t) and len(t) == len(s) for s, t in zip(src, tgt))
    bins = read_paper_bins(tmp_path)
    assert [(s.name, len(s)) for s in bins] == [("201:250", 50), ("251:300", 20)]
    with pytest.raises(CraspError, match="one character"):
        write_task(dataclasses.replace(task, vocab=("aa", "b")), tmp_path, "paper")


# ---------------------------------------------------------------------------- command line

def test_languages_command():
    result = CliRunner().invoke(languages_command, [])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:3] == ["name", "alphabet", "C-RASP-expressible"]
    rows = {line.split()[0]: line.split() for line in lines[1:]}
    assert set(rows) == set(LANGUAGES)
    assert rows["L5"][3:6] == ["yes", "5", "3"]
    assert rows["parity"][3:6] == ["no", "-", "-"]
    records = [json.loads(line) for line in
               CliRunner().invoke(languages_command, ["--json"]).output.splitlines()]
    assert {r["name"] for r in records} == set(LANGUAGES)


@pytest.mark.parametrize("family", "LE")
@pytest.mark.parametrize("k", [1, 3, 8, 9])
def test_languages_program_prints_every_kind_of_program(family, k):
    """The shipped file's text where one ships, the text made in code otherwise (the files
    are that text: test_shipped_programs_equal_the_generated_text), each a program of its
    stated kind."""
    from crasp.languages.programs import prefixes_program, prediction_program, \
        recognition_program
    makers = {"recognition": recognition_program, "prediction": prediction_program,
              "prefixes": prefixes_program}
    for which, make in makers.items():
        result = CliRunner().invoke(cli, ["languages", "--program", f"{family}{k}", "--which",
                                          which])
        assert result.exit_code == 0, result.output
        assert result.output == make(k, family == "E")
        crasp.parse_program(result.output)
    records = {json.loads(line)["name"]: json.loads(line) for line in
               CliRunner().invoke(languages_command, ["--json"]).output.splitlines()}
    assert records["L5"]["prefixes_program"].endswith("programs/L5_prefixes.crasp")
    assert records["L9"]["prefixes_program"] == "generated"
    assert records["dyck1"]["prefixes_program"] == "generated"
    assert records["parity"]["prefixes_program"] == "-"


@pytest.mark.parametrize("arguments,message", [
    (["--program", "parity", "--which", "prefixes"], "parity has no prefixes program"),
    (["--program", "parity"], "parity has no recognition program"),
    (["--program", "nope"], "unknown language 'nope'")])
def test_languages_program_refuses_what_does_not_exist(arguments, message):
    result = CliRunner().invoke(cli, ["languages", *arguments])
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output


def test_generate_command(tmp_path):
    args = ["L8", "--bins", "8:30,31:40", "--n", "100", "--seed", "0", "-o", str(tmp_path)]
    result = CliRunner().invoke(generate_command, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "L8" / "manifest.json").read_text())
    assert manifest["language"] == "L8" and manifest["seed"] == 0
    assert manifest["bins"] == ["8:30", "31:40"]
    assert manifest["counts"] == {"train": 80, "val": 20, "31:40": 100}
    assert set(manifest["duplicates"]) == {"train", "val", "31:40"}
    task = read_task(tmp_path / "L8")
    assert_same_task(task, build_task("L8", (8, 30), [(31, 40)], 100, 100, 0.2, seed=0))
    result = CliRunner().invoke(generate_command, args + ["--format", "jsonl", "--force"])
    assert result.exit_code == 0 and (tmp_path / "L8" / "test_31_to_40.jsonl").exists()


def test_generate_a_program_with_strings_from_a_language(tmp_path):
    result = CliRunner().invoke(generate_command, [
        str(PROGRAMS_DIR / "dyck1.crasp"), "--strings-from", "dyck1", "--bins", "2:20", "--n", "50",
        "-o", str(tmp_path), "--format", "jsonl"])
    assert result.exit_code == 0, result.output
    assert read_task(tmp_path / "dyck1@dyck1").train.strings


def test_generate_errors_exit_2_with_a_message(tmp_path):
    result = CliRunner().invoke(cli, ["generate", "L4", "--bins", "1:5", "--n", "100",
                                      "--distinct", "-o", str(tmp_path)])
    assert result.exit_code == 2
    assert "holds only 5 distinct strings" in result.output
    result = CliRunner().invoke(cli, ["generate", "nonsense", "--bins", "1:5", "-o",
                                      str(tmp_path)])
    assert result.exit_code == 2 and "unknown language" in result.output


@pytest.mark.parametrize("name", ["/dev/null", "examples/majority.txt", "./L3", "runs\\x",
                                  "data/L3@dyck1"])
def test_a_path_that_is_not_a_program_file_is_named_as_such(name):
    """A name with a path separator is a file the user meant: the message says it must be a
    program file, instead of listing the built-in languages it is not."""
    with pytest.raises(CraspError, match="is a path but not a program file"):
        get_language(name)
