"""Sparse-memory languages memory-FUNCTION-LAG-...: the numpy oracle and labeller against the
positional C-RASP program on every string up to length 10, the rule before the start, depth,
exact supports and a uniform generator, names, and the listing."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.errors import CraspError
from crasp.languages import LANGUAGES, build_task, get_language
from crasp.languages.sparse_memory import heavy_lags, light_lags

CHECK_LENGTH = 10
NAMES = [name for name in LANGUAGES if name.startswith("memory-")] + [
    "memory-xor-1", "memory-xor-2-5", "memory-xor-1-3-9", "memory-xor-1-2-3-4-5",
    "memory-and-1", "memory-and-2-5", "memory-or-3-7", "memory-or-1-2-3-4"]


def every_string(length: int) -> list[tuple[str, ...]]:
    return list(itertools.product("ab", repeat=length))


@pytest.mark.parametrize("name", NAMES)
def test_oracle_and_labels_equal_the_program_on_every_string_up_to_length_10(name):
    """The program's output at position i is its answer on the prefix of length i + 1, so
    one evaluation of every string of length 10 covers every shorter string too."""
    lang = get_language(name)
    program = lang.program.load()
    assert crasp.depth_of(program) == lang.recognition_depth == lang.prediction_depth == 1
    strings = every_string(CHECK_LENGTH)
    output = crasp.evaluate(program, strings).output[:, :CHECK_LENGTH]
    labels = np.array([lang.prefix_labels(s) for s in strings])
    assert np.array_equal(output, labels)
    for length in range(CHECK_LENGTH + 1):
        rows = output[::2 ** (CHECK_LENGTH - length), length - 1] if length else \
            crasp.evaluate(program, [[]]).accept
        assert rows.tolist() == [lang.oracle(s) for s in every_string(length)]


@pytest.mark.parametrize("name, word, expected", [
    # a lag before the start reads a
    ("memory-xor-3", "bbb", "000"), ("memory-xor-3", "babb", "0001"),
    ("memory-xor-1-2-4", "abbab", "00101"), ("memory-or-1-2-4", "baaab", "01101"),
    ("memory-and-1-4", "bbbbb", "00001"), ("memory-and-1-4", "abbbb", "00000"),
])
def test_labels_by_hand(name, word, expected):
    assert "".join(str(int(v)) for v in get_language(name).prefix_labels(list(word))) == \
        expected


@pytest.mark.parametrize("name", NAMES)
def test_depth_zero_cannot_tell_the_witnesses_apart(name):
    """The docstring's witnesses: same length and last token, different labels."""
    lang = get_language(name)
    function, lags = name.split("-")[1], [int(t) for t in name.split("-")[2:]]
    if function == "and":
        inside, outside = "b" * (lags[-1] + 1), "a" + "b" * lags[-1]
    else:
        inside, outside = "b" + "a" * lags[0], "a" * (lags[0] + 1)
    assert len(inside) == len(outside) and inside[-1] == outside[-1]
    assert lang.contains(list(inside)) and not lang.contains(list(outside))


@pytest.mark.parametrize("name", ["memory-xor-1-2-4", "memory-and-2-3", "memory-or-1-5",
                                  "memory-xor-6"])
@pytest.mark.parametrize("length", [0, 1, 2, 3, 6, 8])
def test_generator_is_uniform_over_exactly_the_positive_strings(name, length):
    lang = get_language(name)
    positives = {"".join(s) for s in every_string(length) if lang.oracle(s)}
    assert lang.support_size(length) == len(positives)
    if not positives:
        with pytest.raises(CraspError, match="has no string of length"):
            lang.sample(length, np.random.default_rng(0))
        return
    rng = np.random.default_rng(length)
    count = 200 * len(positives)
    seen: dict[str, int] = {}
    for _ in range(count):
        word = "".join(lang.sample(length, rng))
        seen[word] = seen.get(word, 0) + 1
    assert set(seen) == positives
    expected = count / len(positives)
    assert all(abs(f - expected) < 5 * np.sqrt(expected) for f in seen.values())


def test_lengths_and_datasets():
    assert get_language("memory-and-1-2-4").lengths_note == "length >= 5"
    assert get_language("memory-xor-3-7").lengths_note == "length >= 4"
    assert get_language("memory-xor-10000000000").lengths_note == "length >= 10000000001"
    task = build_task("memory-xor-1-2-4-8", (1, 40), [(41, 80)], 200, 100, 0.2, seed=0)
    lang = get_language("memory-xor-1-2-4-8")
    for split in task.splits:
        for tokens, labels in zip(split.strings, split.labels):
            assert labels[-1] and np.array_equal(labels, lang.prefix_labels(tokens))
    ones = np.mean([labels[20:].mean() for labels in task.tests[0].labels])
    assert 0.45 < ones < 0.55  # uniform tokens: every label inside is a fair coin


def test_lag_sets():
    assert light_lags(4) == (1, 2, 3, 4) and heavy_lags(4) == (1, 2, 4, 8)
    listed = [name for name in LANGUAGES if name.startswith("memory-")]
    assert {"memory-xor-1-2-3", "memory-xor-1-2-4", "memory-xor-1-2-3-4",
            "memory-xor-1-2-4-8"} <= set(listed)
    for name in listed:
        program = LANGUAGES[name].program.source
        lags = name.split("-")[2:]
        assert program.count("#[offset(") == len(lags)
        assert all(f"#[offset({t})]" in program for t in lags)


@pytest.mark.parametrize("bad, message", [
    ("memory-xor-2-1", "increasing"), ("memory-xor-0-1", ">= 1"),
    ("memory-xor-1-1", "increasing"),
    ("memory-nand-1-2", "unknown function 'nand'; use one of xor, and, or"),
    ("memory-xor", "memory-FUNCTION-LAG"), ("memory-xor-1-x", "memory-FUNCTION-LAG"),
])
def test_bad_names_say_what_is_expected(bad, message, tmp_path):
    with pytest.raises(CraspError, match=message):
        get_language(bad)
    result = CliRunner().invoke(cli, ["generate", bad, "--bins", "1:10", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "Traceback" not in result.output


def test_crasp_languages_lists_them(tmp_path):
    result = CliRunner().invoke(cli, ["languages", "--json"])
    records = {r["name"]: r for r in map(json.loads, result.output.splitlines())}
    record = records["memory-xor-1-2-4-8"]
    assert (record["recognition_depth"], record["prediction_depth"]) == (1, 1)
    assert record["source"] == "generated" and "before the start" in record["note"]
    assert "memory-or-1-2-4" in CliRunner().invoke(cli, ["languages"]).output
    unknown = CliRunner().invoke(cli, ["generate", "memo", "--bins", "1:10", "-o",
                                       str(tmp_path)])
    assert "memory-FUNCTION-LAG" in unknown.output
