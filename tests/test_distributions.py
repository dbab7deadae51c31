"""Named test distributions of L_k and E_k (uniform, skewed, extreme) and test bins LO:HI@NAME:
each distribution's strings satisfy its definition (measured block-length statistics), lie in
the language with the oracle's labels, reach exactly the strings its support size counts, are
seeded; uniform bins draw exactly the strings they drew before distributions existed."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.languages import blocks, build_task, get_language, read_task
from crasp.languages.datasets import (BinSpec, by_distribution, parse_bin, parse_bins,
                                      parse_test_bin, parse_test_bins)
from crasp.languages.distributions import (EXTREME_SHORT_MAX, SKEWED_CONCENTRATION,
                                           sample_dirichlet_composition)
from crasp.languages.language import choose_weighted

FIXTURE = Path(__file__).parent / "fixtures" / "uniform_bins_3881b3a.json"
NAMED = ("skewed", "extreme")


def digest(split) -> str:
    return hashlib.sha256("\n".join("".join(t) for t in split.strings).encode()).hexdigest()


def block_lengths(tokens) -> np.ndarray:
    return blocks.lengths_of_blocks(get_language("E1").encode(tokens))


# ---------------------------------------------------------------------------- uniform

def test_uniform_bins_draw_the_strings_they_drew_before_distributions():
    """The fixture holds the digests of every split at commit 3881b3a (see its _about)."""
    expected = json.loads(FIXTURE.read_text())
    for name in ("L3", "L8", "E4", "E3@0.3"):
        task = build_task(name, (20, 40), ["20:40", "81:120@uniform", "81:120@skewed"], 200,
                          100, 0.2, seed=5)
        got = {split.name: digest(split) for split in task.splits}
        assert {split: got[split] for split in expected[name]} == expected[name], name


def test_a_bin_as_pair_text_or_test_bin_is_the_same_bin():
    specs = [[(31, 40), (41, 50)], ["31:40", "41:50@uniform"], [BinSpec(31, 40), "41_to_50"]]
    tasks = [build_task("E3", (10, 30), spec, 100, 40, 0.2, seed=1) for spec in specs]
    for task in tasks:
        assert [s.name for s in task.tests] == ["31:40", "41:50"]
        assert [s.strings for s in task.tests] == [s.strings for s in tasks[0].tests]
        assert task.test_bins == [(31, 40), (41, 50)]


def test_dirichlet_concentration_one_is_the_uniform_composition():
    """All C(6, 2) = 15 compositions of 7 into 3 parts, each with frequency 1/15 (5 SE)."""
    rng = np.random.default_rng(0)
    count = 15 * 400
    seen: dict[tuple, int] = {}
    for _ in range(count):
        key = tuple(sample_dirichlet_composition(3, 7, 1.0, rng).tolist())
        seen[key] = seen.get(key, 0) + 1
    assert len(seen) == math.comb(6, 2) and all(sum(key) == 7 for key in seen)
    expected = count / 15
    assert all(abs(f - expected) < 5 * math.sqrt(expected) for f in seen.values())


# ---------------------------------------------------------------------------- definitions

def measured_blocks(name: str, distribution: str, n: int, count: int) -> np.ndarray:
    """[count, k] block lengths of ``count`` strings of length n (letters only for E_k)."""
    lang = get_language(name).under(distribution)
    rng = np.random.default_rng(7)
    return np.array([block_lengths(lang.sample(n, rng)) for _ in range(count)])


@pytest.mark.parametrize("k", [3, 6])
def test_skewed_block_lengths_have_the_dirichlet_multinomial_moments(k):
    """E[n_j] = 1 + N/k and Var[n_j] = N (1/k)(1 - 1/k)(N + k a)/(1 + k a), N = n - k; the
    uniform composition is a = 1, so skewed blocks vary (1 + k)/(1 + k a) times as much."""
    n, count = 120, 3000
    big_n = n - k

    def variance(alpha):
        return big_n / k * (1 - 1 / k) * (big_n + k * alpha) / (1 + k * alpha)

    skewed = measured_blocks(f"L{k}", "skewed", n, count)
    uniform = measured_blocks(f"L{k}", "uniform", n, count)
    for lengths, alpha in ((skewed, SKEWED_CONCENTRATION), (uniform, 1.0)):
        assert lengths.shape == (count, k) and np.all(lengths.sum(axis=1) == n)
        standard_error = math.sqrt(variance(alpha) / lengths.size)
        assert abs(lengths.mean() - (1 + big_n / k)) < 5 * standard_error
        assert abs(lengths.var() / variance(alpha) - 1) < 0.1
    assert skewed.var() > 2 * uniform.var()


@pytest.mark.parametrize("name", ["L2", "L5", "E4", "E3@0.2"])
def test_extreme_has_one_long_block_anywhere_and_uniform_short_ones(name):
    k = int(re.match(r"[LE](\d+)", name)[1])
    lengths = measured_blocks(name, "extreme", 300, 2000)
    short = np.sort(lengths, axis=1)[:, :-1]
    assert np.all(short <= EXTREME_SHORT_MAX) and np.all(short >= 1)
    # every short length equally likely, the long block at every index equally likely
    frequencies = np.bincount(short.ravel(), minlength=EXTREME_SHORT_MAX + 1)[1:]
    expected = short.size / EXTREME_SHORT_MAX
    assert np.all(np.abs(frequencies - expected) < 5 * np.sqrt(expected))
    places = np.bincount(np.argmax(lengths, axis=1), minlength=k)
    assert np.all(np.abs(places - 2000 / k) < 5 * np.sqrt(2000 / k))


@settings(max_examples=200)
@given(name=st.sampled_from(["L1", "L3", "L6", "L12", "E2", "E5", "E3@0"]),
       distribution=st.sampled_from(NAMED), length=st.integers(0, 60),
       seed=st.integers(0, 2**32))
def test_every_string_is_in_the_language_with_the_oracle_labels(name, distribution, length,
                                                                 seed):
    lang = get_language(name).under(distribution)
    k = int(re.match(r"[LE](\d+)", name)[1])
    assert (lang.support_size(length) == 0) == (length < k)
    length = max(length, k)
    tokens = lang.sample(length, np.random.default_rng(seed))
    lengths = block_lengths(tokens)
    assert len(tokens) == length and lang.contains(tokens) and len(lengths) == k
    if distribution == "extreme":  # also the conditioned draws of short strings
        assert np.sum(lengths > EXTREME_SHORT_MAX) <= 1
    assert lang.prefix_labels(tokens).tolist() == \
        [lang.contains(tokens[:i + 1]) for i in range(length)]


@pytest.mark.parametrize("name, length", [("L3", 7), ("L3", 12), ("L4", 11), ("L1", 6),
                                          ("E2", 6), ("E3@0.3", 7)])
@pytest.mark.parametrize("distribution", NAMED)
def test_support_size_counts_exactly_the_strings_drawn(name, length, distribution):
    """The strings of the language the distribution reaches, counted by enumeration, are
    ``support_size`` many, and sampling draws all of them and nothing else."""
    lang = get_language(name).under(distribution)
    reachable = {"".join(s) for s in itertools.product(lang.alphabet, repeat=length)
                 if lang.oracle(s) and lang.reaches(lang.encode(s))}
    assert lang.support_size(length) == len(reachable)
    rng = np.random.default_rng(0)
    drawn = {"".join(lang.sample(length, rng)) for _ in range(30 * len(reachable) + 300)}
    assert drawn == reachable


def test_extreme_counts_and_draws_for_many_blocks():
    """No recursion in the counts: L1500 has one all-short string of length 1500, and
    1500 * 4^1499 + ... of length 10,000 (one long block)."""
    lang = get_language("L1500").under("extreme")
    assert lang.support_size(1500) == 1
    assert lang.support_size(10_000) == 1500 * 4 ** 1499
    lengths = block_lengths(lang.sample(1510, np.random.default_rng(0)))
    assert len(lengths) == 1500 and np.sum(lengths > EXTREME_SHORT_MAX) <= 1


def test_weights_beyond_floating_point_are_drawn_exactly():
    """The counts that weight the conditioned draws of extreme (and of the sparse-memory
    generator) can exceed 10^308; their shares are still exact."""
    rng = np.random.default_rng(0)
    picks = [choose_weighted([3 * 10**400, 0, 10**400], rng) for _ in range(4000)]
    standard_error = math.sqrt(0.75 * 0.25 / 4000)
    assert set(picks) == {0, 2} and abs(picks.count(0) / 4000 - 0.75) < 5 * standard_error
    assert choose_weighted([0, 0, 5], rng) == 2


# ---------------------------------------------------------------------------- datasets

def test_test_bins_draw_from_their_distribution_with_oracle_labels():
    lang = get_language("E4")
    task = build_task(lang, (20, 40), ["61:80", "61:80@skewed", "61:80@extreme"], 100, 60,
                      0.2, seed=2)
    assert [s.name for s in task.tests] == ["61:80", "61:80@skewed", "61:80@extreme"]
    assert [s.distribution for s in task.splits] == ["uniform"] * 3 + ["skewed", "extreme"]
    for split in task.tests:
        assert len(split) == 60
        for tokens, labels in zip(split.strings, split.labels):
            assert 61 <= len(tokens) <= 80 and lang.contains(tokens)
            assert np.array_equal(labels, lang.prefix_labels(tokens))
    extreme = task.tests[2].strings
    assert all(np.sum(block_lengths(t) > EXTREME_SHORT_MAX) == 1 for t in extreme)


@pytest.mark.parametrize("name", ["L5", "E4"])
def test_the_compiled_prediction_model_labels_every_distribution_as_the_oracle(name):
    """The transformer compiled from the prediction program (exact executor) agrees with the
    oracle's labels at every position, under every distribution: they are one labelling."""
    from crasp.compiler import compile_program, execute

    lang = get_language(name)
    model = compile_program(lang.prediction_program.load())
    task = build_task(lang, (10, 30), ["61:90", "61:90@skewed", "61:90@extreme"], 10, 60, 0.0,
                      seed=0)
    for split in task.tests:
        output = np.asarray(execute(model, split.strings).output).astype(bool)
        for row, (tokens, labels) in enumerate(zip(split.strings, split.labels)):
            assert np.array_equal(output[row, :len(tokens)], labels), split.name


def test_distribution_bins_are_seeded_and_change_no_other_split():
    first = build_task("L5", (20, 40), ["41:60", "41:60@skewed"], 100, 50, 0.2, seed=3)
    again = build_task("L5", (20, 40), ["41:60@extreme", "41:60", "41:60@skewed"], 100, 50,
                       0.2, seed=3)
    other = build_task("L5", (20, 40), ["41:60@skewed"], 100, 50, 0.2, seed=4)
    assert first.tests[0].strings == again.tests[1].strings
    assert first.tests[1].strings == again.tests[2].strings != other.tests[0].strings
    assert first.tests[0].strings != first.tests[1].strings  # streams of their own


def test_distinct_counts_only_training_strings_the_distribution_can_draw():
    """L3 in 3:14 under extreme: the training strings it cannot draw do not reduce what the
    test bin holds, so the exact number of fresh distinct strings can be asked for."""
    lang = get_language("L3")
    train = build_task(lang, (3, 14), [], 200, 0, 0.0, seed=0, distinct=True).train
    extreme = lang.under("extreme")
    reachable = sum(extreme.support_size(n) for n in range(3, 15))
    fresh = reachable - len({tuple(s) for s in train.strings
                             if extreme.reaches(lang.encode(s))})
    assert fresh > reachable - len({tuple(s) for s in train.strings})
    task = build_task(lang, (3, 14), ["3:14@extreme"], 200, fresh, 0.0, seed=0, distinct=True)
    assert len({tuple(s) for s in task.tests[0].strings}) == fresh
    with pytest.raises(CraspError, match=f"holds only {fresh} distinct strings"):
        build_task(lang, (3, 14), ["3:14@extreme"], 200, fresh + 1, 0.0, seed=0, distinct=True)


def test_a_program_drawing_from_a_block_language_takes_its_distributions(tmp_path):
    """prog.crasp@E3 draws the strings E3 draws, whatever the program's token order, and the
    program's labels are the oracle's."""
    bins = ["31:40", "31:40@skewed", "31:40@extreme"]
    shipped = Path(__file__).parent.parent / "examples" / "E3_predict.crasp"
    source = tmp_path / "E3_reordered.crasp"
    source.write_text(shipped.read_text().replace('alphabet "a" "b" "e"', 'alphabet "e" "b" "a"'))
    assert get_language(str(source)).alphabet == ("e", "b", "a")
    task = build_task(f"{source}@E3", (10, 30), bins, 60, 20, 0.2, seed=4, distinct=True)
    reference = build_task("E3", (10, 30), bins, 60, 20, 0.2, seed=4, distinct=True)
    for split, expected in zip(task.splits, reference.splits, strict=True):
        assert (split.name, split.strings) == (expected.name, expected.strings)
        assert all(np.array_equal(a, b) for a, b in zip(split.labels, expected.labels))
    assert get_language(f"{source}@E3").distributions.keys() == {"skewed", "extreme"}


# ---------------------------------------------------------------------------- parsing, errors

def test_the_bin_parser():
    assert parse_test_bin("351:400@skewed") == BinSpec(351, 400, "skewed")
    assert parse_test_bin(" 351_to_400 @ extreme ") == BinSpec(351, 400, "extreme")
    assert parse_test_bin("351-400") == parse_test_bin("351:400@uniform") == BinSpec(351, 400)
    assert BinSpec(351, 400, "uniform").name == "351:400"
    assert BinSpec(351, 400, "skewed").name == "351:400@skewed"
    assert parse_test_bins("1:5,6:9@extreme") == [BinSpec(1, 5), BinSpec(6, 9, "extreme")]
    assert parse_bin("1:5") == (1, 5) and parse_bins("1:5,6:9") == [(1, 5), (6, 9)]
    for bad in ["5:1@skewed", "1:5@", "1:5@sk ewed", "1:5@@x", "@skewed"]:
        with pytest.raises(CraspError, match="bin"):
            parse_test_bin(bad)
    with pytest.raises(CraspError, match=r"here a bin takes no test distribution \(@skewed\)"):
        parse_bins("1:5,6:9@skewed")


def test_a_language_without_the_distribution_says_what_it_has():
    with pytest.raises(CraspError, match=r"dyck1 has no test distribution 'skewed'; it has "
                                         r"uniform \(its own generator\)$"):
        build_task("dyck1", (2, 10), ["12:20@skewed"], 10, 10)
    with pytest.raises(CraspError, match="uniform .*, skewed, extreme"):
        build_task("L3", (3, 10), ["12:20@heavy"], 10, 10)
    assert get_language("majority").under("uniform") is get_language("majority")


def test_crasp_languages_gives_the_definitions():
    result = CliRunner().invoke(cli, ["languages", "--json"])
    records = {r["name"]: r for r in map(json.loads, result.output.splitlines())}
    assert list(records["L5"]["test_distributions"]) == ["uniform", "skewed", "extreme"]
    assert "Dirichlet" in records["E3"]["test_distributions"]["skewed"]
    assert f"1..{EXTREME_SHORT_MAX}" in records["L5"]["test_distributions"]["extreme"]
    assert list(records["dyck1"]["test_distributions"]) == ["uniform"]


# ---------------------------------------------------------------------------- command line

@pytest.mark.parametrize("fmt", ["paper", "jsonl"])
def test_generate_writes_one_dataset_per_distribution(tmp_path, fmt):
    args = ["generate", "L5", "--bins", "20:40,41:60,41:60@skewed,41:60@extreme", "--n", "50",
            "--seed", "1", "-o", str(tmp_path), "--format", fmt]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    task = build_task("L5", (20, 40), ["41:60", "41:60@skewed", "41:60@extreme"], 50, 50,
                      0.2, seed=1)
    for distribution, part in by_distribution(task).items():
        directory = tmp_path / ("L5" if distribution == "uniform" else f"L5@{distribution}")
        written = read_task(directory)
        assert [s.name for s in written.splits] == [s.name for s in part.splits]
        assert [s.strings for s in written.splits] == [s.strings for s in part.splits]
        assert f"wrote {directory / 'manifest.json'}" in result.output
    assert "41:60@extreme" in result.output


def test_generate_train_bin_takes_no_distribution(tmp_path):
    result = CliRunner().invoke(cli, ["generate", "L3", "--bins", "21:30@skewed", "--train-bin",
                                      "3:20@skewed", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "the training bin takes no test distribution" in \
        result.output


def test_generate_writes_nothing_when_a_distribution_bin_is_repeated(tmp_path):
    result = CliRunner().invoke(cli, ["generate", "L3", "--bins", "3:20,21:30,21:30@extreme,"
                                      "21:30@extreme", "--n", "20", "-o", str(tmp_path)])
    assert result.exit_code == 2 and "test bin 21:30@extreme listed twice" in result.output
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("bins, message", [
    ("2:20,22:30@skewed", "dyck1 has no test distribution 'skewed'"),
    ("2:20@skewed,22:30", "the training bin takes no test distribution"),
    ("2:20,22:30@sk!ewed", "bad bin"),
    ("2:20,22:30,22:30@uniform", "test bin 22:30 listed twice"),
])
def test_generate_refuses_bad_distributions_with_exit_2(tmp_path, bins, message):
    result = CliRunner().invoke(cli, ["generate", "dyck1", "--bins", bins, "-o", str(tmp_path)])
    assert result.exit_code == 2 and message in result.output
    assert "Traceback" not in result.output and not any(tmp_path.iterdir())
