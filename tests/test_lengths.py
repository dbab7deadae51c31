"""Where a language's strings are, and how long a string may be: ``Language.lengths`` states
the lengths with strings (every language's and test distribution's ``support_size(n) > 0``
agrees with it), a bin enumerates its lengths without counting strings, and every way to name
a length bin refuses one past ``MAX_LENGTH`` (a bin 21:10**30 in a run's config.json hung
``crasp extract`` and ``crasp analyze``; a bin 1:2000 of E_4 took 43 s, and ``crasp generate
dyck1 --bins 1:20,1:1000000`` did not end in 300 s)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.errors import CraspError
from crasp.languages import LANGUAGES, blocks, build_task, datasets, get_language
from crasp.languages import counting as counting_languages
from crasp.languages import distributions
from crasp.languages.datasets import MAX_TOKENS
from crasp.languages.language import MAX_LENGTH, Lengths
from crasp.train.config import TrainConfig

ROOT = Path(__file__).resolve().parents[1]
SHORT = range(0, 65)
EXTRA = ["E3@0.5", "E2@0.01", "L20", "E15", f"{ROOT / 'examples' / 'majority.crasp'}",
         f"{ROOT / 'examples' / 'L3.crasp'}@L3", f"{ROOT / 'examples' / 'anbncn.crasp'}@anbncn"]


def every_language():
    for name in [*LANGUAGES, *EXTRA]:
        language = get_language(name)
        yield name, language
        for distribution in language.distributions:
            yield f"{name} @{distribution}", language.under(distribution)


@pytest.mark.parametrize("name, language", list(every_language()), ids=lambda v: str(v)[:40])
def test_the_stated_lengths_are_where_the_support_is_not_empty(name, language):
    lengths = language.lengths
    assert lengths.shortest % lengths.step == 0
    for n in SHORT:
        assert (language.support_size(n) > 0) == lengths.holds(n), (name, n)
    assert language.lengths_in(3, 64).tolist() == [n for n in range(3, 65) if lengths.holds(n)]


@pytest.mark.parametrize("lengths, note", [
    (Lengths(), "any length"), (Lengths(4), "length >= 4"), (Lengths(0, 2), "even length"),
    (Lengths(0, 3), "length divisible by 3"), (Lengths(4, 2), "even length >= 4")])
def test_lengths_in_words_and_in_a_bin(lengths, note):
    assert lengths.note == note
    for lo in range(0, 12):
        for hi in range(lo, 14):
            expected = [n for n in range(lo, hi + 1) if lengths.holds(n)]
            assert lengths.within(lo, hi).tolist() == expected, (lo, hi)


def uncountable(language):
    """The language with a support count that fails when asked: lengths must not need it."""
    def support_size(n):
        raise AssertionError(f"support_size({n}) was computed")
    return dataclasses.replace(language, support_size=support_size)


@pytest.mark.parametrize("name", ["dyck1", "E4", "majority", "memory-xor-1-2-3", "anbncn"])
def test_a_bin_up_to_the_longest_length_is_enumerated_without_counting(name):
    language = uncountable(get_language(name))
    lengths = language.lengths_in(1, MAX_LENGTH)
    assert lengths[-1] <= MAX_LENGTH and len(lengths) >= MAX_LENGTH // 3
    with pytest.raises(CraspError, match="has no string of length"):
        language.draw(-1, np.random.default_rng(0))


def counting(language, calls):
    def support_size(n):
        calls.append(n)
        return language.support_size(n)
    return dataclasses.replace(language, support_size=support_size)


@pytest.mark.parametrize("name", ["dyck1", "E4", "majority", "L3"])
def test_availability_is_counted_only_until_it_holds_the_request(name):
    calls = []
    language = counting(get_language(name), calls)
    build_task(language, "1:60", ["61:100000"], n_train=20, n_test=4, seed=0, distinct=True)
    assert calls == []   # each length holds a string, and the bins have enough lengths
    task = build_task(language, "1:60", ["61:65"], n_train=20, n_test=50, seed=0,
                      distinct=True)
    assert calls == [61 if language.lengths.holds(61) else 62], calls
    assert len({"".join(s) for s in task.tests[0].strings}) == 50


def test_a_request_too_large_for_a_bin_is_still_counted_exactly():
    with pytest.raises(CraspError, match=r"holds only 1 distinct strings"):
        build_task("anbn", "2:20", ["22:23"], n_train=5, n_test=2, seed=0, distinct=True)


TOO_LONG = [f"21:{MAX_LENGTH + 1}", "21:" + "9" * 31]


@pytest.mark.parametrize("text", TOO_LONG)
def test_every_bin_parser_refuses_a_bound_past_the_longest_length(text):
    hi = int(text.split(":")[1])
    for parse in (datasets.parse_bin, datasets.parse_test_bin, datasets.check_bin,
                  datasets.as_test_bin):
        with pytest.raises(CraspError, match=f"HI <= {MAX_LENGTH:,}"):
            parse(text)
    with pytest.raises(CraspError, match=f"HI <= {MAX_LENGTH:,}"):
        datasets.check_bin((21, hi))
    with pytest.raises(CraspError, match="drawn up to length"):
        get_language("L3").lengths_in(21, hi)
    with pytest.raises(CraspError, match="drawn up to length"):
        get_language("L3").draw(hi, np.random.default_rng(0))
    assert datasets.check_bin((21, MAX_LENGTH)) == (21, MAX_LENGTH)


@pytest.mark.parametrize("field", ["train_bin", "test_bins"])
def test_a_config_refuses_a_bound_past_the_longest_length(field):
    bins = {"train_bin": [1, 20], "test_bins": [[21, 40]]}
    bins[field] = [1, 10 ** 30] if field == "train_bin" else [[21, 10 ** 30]]
    config = TrainConfig.from_dict({**TrainConfig(language="L3", depth=1).to_dict(), **bins})
    with pytest.raises(CraspError, match=f"HI <= {MAX_LENGTH:,}"):
        config.validate()


@pytest.mark.parametrize("args", [
    ["generate", "L3", "--bins", f"1:20,21:{10 ** 30}", "--n", "5", "-o", "out"],
    ["generate", "dyck1", "--train-bin", "1:20", "--bins", f"21:{MAX_LENGTH + 1}", "-o", "out"],
    ["train", "--language", "L3", "--depth", "1", "--train-bin", "1:20", "--test-bins",
     f"21:{10 ** 30}", "--epochs", "1", "-o", "out", "--no-progress"],
    ["sweep", "--languages", "L3", "--depths", "1", "--seeds", "0:0", "--grid",
     f"test_bins=21:{10 ** 30}", "-o", "out", "--no-progress"],
    ["sweep", "--languages", "L3", "--depths", "1", "--seeds", "0:0", "--grid",
     f"train_bin=1:{MAX_LENGTH + 1}", "-o", "out", "--no-progress"],
])
def test_commands_refuse_a_bound_past_the_longest_length_in_one_line(args, tmp_path,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2 and f"HI <= {MAX_LENGTH:,}" in result.output, result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_the_closed_counts_equal_their_plain_sums():
    """E_k's count (``neutral_support`` over L_k's letters) and majority's, now in closed form,
    against the sums they replace (the sums, in turn, against enumeration in
    tests/test_languages.py, for the lengths enumeration reaches)."""
    for k in range(1, 10):
        for n in range(0, 71):
            plain = sum(math.comb(n, r) * blocks.blocks_support(k, n - r)
                        for r in range(n - k + 1))
            assert blocks.neutral_support(k, 0.3, n) == plain, (k, n)
    for n in range(0, 201):
        plain = sum(math.comb(n, c) for c in range(n // 2 + 1, n + 1))
        assert counting_languages.majority_support(n) == plain, n


def test_a_letter_count_that_settles_gives_the_same_e_k_count_in_fewer_terms():
    """E_k under ``extreme`` (whose letter count is k 4^(k-1) from 4k + 1 letters on): the
    count in 4k + 1 terms against the sum of n terms, for every length up to 40 past where it
    settles, and the settled value itself against ``extreme_support`` well past it."""
    for k in range(1, 8):
        settles = distributions.EXTREME.settles_at(k)
        assert all(distributions.extreme_support(k, m) == k * 4 ** (k - 1)
                   for m in range(settles, settles + 60))
        assert distributions.extreme_support(k, settles - 1) != k * 4 ** (k - 1) or k == 1
        for n in range(0, settles + 41):
            plain = sum(math.comb(n, r) * distributions.extreme_support(k, n - r)
                        for r in range(n - k + 1))
            assert blocks.neutral_support(k, 0.3, n, distributions.extreme_support,
                                          settles) == plain, (k, n)
    assert get_language("E3").under("extreme").support_size(30) == \
        blocks.neutral_support(3, 0.3, 30, distributions.extreme_support)


@pytest.mark.parametrize("n_train, train_bin, n_test, test_bins", [
    (20, "1:20", 201, [f"1:{MAX_LENGTH}"]),                       # one long test bin
    (20, "1:20", 2 * MAX_TOKENS // (3 * 1000), ["21:1000", "1001:2000"]),  # several together
    (MAX_TOKENS // 10, "1:11", 0, ["12:20"]),                      # the training bin alone
])
def test_a_dataset_past_the_token_budget_is_refused_before_drawing(n_train, train_bin, n_test,
                                                                  test_bins):
    language = uncountable(get_language("L3"))   # nothing may be counted, let alone drawn
    with pytest.raises(CraspError, match=f"more than {MAX_TOKENS:,}; ask for fewer"):
        build_task(language, train_bin, test_bins, n_train=n_train, n_test=n_test, seed=0)


def test_a_dataset_at_the_token_budget_is_not_refused_for_its_size():
    """Exactly ``MAX_TOKENS`` passes the size check; the next refusal is the bin's (anbn has
    two strings in 22:24), which comes before anything is drawn."""
    n_test = (MAX_TOKENS - 10 * 20) // 24
    assert 10 * 20 + n_test * 24 <= MAX_TOKENS < 10 * 20 + (n_test + 1) * 24
    with pytest.raises(CraspError, match="holds only 2 distinct strings"):
        build_task("anbn", "2:20", ["22:24"], n_train=10, n_test=n_test, seed=0, distinct=True)
    with pytest.raises(CraspError, match=f"more than {MAX_TOKENS:,}"):
        build_task("anbn", "2:20", ["22:24"], n_train=10, n_test=n_test + 1, seed=0,
                   distinct=True)


def test_generate_refuses_a_dataset_past_the_token_budget_in_one_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["generate", "L3", "--bins", f"1:20,999000:{MAX_LENGTH}",
                                      "--n", "100000", "-o", "out"])
    assert result.exit_code == 2 and f"more than {MAX_TOKENS:,}" in result.output, result.output
    assert result.output.count("\n") == 1 and not (tmp_path / "out").exists()


def test_a_run_past_the_token_budget_is_refused_by_its_config():
    """``crasp train`` and ``crasp sweep`` validate the config before writing anything: a sweep
    once recorded such a cell as failed only when it ran."""
    config = TrainConfig(language="L3", depth=1, train_bin=(1, 20),
                         test_bins=[(999_000, MAX_LENGTH, "skewed")], n_test=100_000)
    with pytest.raises(CraspError, match=f"more than {MAX_TOKENS:,}"):
        config.validate()


def test_a_sweep_past_the_token_budget_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [
        "sweep", "--languages", "L3", "--depths", "1", "--seeds", "0:0", "--grid",
        f"test_bins=999000:{MAX_LENGTH}", "--grid", "n_test=100000", "-o", "out",
        "--no-progress"])
    assert result.exit_code == 2 and f"more than {MAX_TOKENS:,}" in result.output, result.output
    assert not (tmp_path / "out").exists()
