"""``RunResults``: the one reader and writer of results.json, against the trainer's real file."""

from __future__ import annotations

import json

import pytest

from crasp.errors import CraspError
from crasp.train import TrainConfig
from crasp.train.loop import train
from crasp.train.results import RESULTS_FILE, BinScore, ResultsFormatError, RunResults


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    config = TrainConfig(language="L3", depth=1, train_bin=(4, 8), test_bins=[(9, 12), (13, 16)],
                         n_train=16, n_test=8, epochs=1, d_model=16, n_heads=2, d_ff=16,
                         batch_size=8, threads=1)
    run_dir = tmp_path_factory.mktemp("run")
    return run_dir, train(config, run_dir, progress=False)


def test_the_trainers_file_round_trips_byte_for_byte(trained):
    run_dir, returned = trained
    text = (run_dir / RESULTS_FILE).read_text()
    results = RunResults.read(run_dir)
    assert json.dumps(results.to_json(), indent=2) + "\n" == text
    assert results.to_json() == returned
    assert list(json.loads(text)) == list(returned)  # the key order is the trainer's
    assert not results.extra  # the trainer writes no key RunResults does not know


# set only for a search run as parts (tests/test_search_parts.py checks them)
SPLIT_SEARCH_FIELDS = ("search_trial", "assembled_from")


def test_the_trainer_fills_every_field(trained):
    results = RunResults.read(trained[0])
    for name in RunResults.__dataclass_fields__:
        if name not in ("extra", *SPLIT_SEARCH_FIELDS):
            assert getattr(results, name) is not None, name
        elif name != "extra":
            assert getattr(results, name) is None, name
    assert set(results.bins) == {"9:12", "13:16"}
    assert all(isinstance(score, BinScore) and score.n == 8 for score in results.bins.values())


def test_long_bin_is_the_uniform_bin_with_the_largest_upper_end():
    results = RunResults(bins={"5:9": BinScore(0.5), "10:12": BinScore(0.25),
                               "10:12@extreme": BinScore(0.0), "1:12": BinScore(1.0)})
    assert results.long_bin == "10:12" and results.long_exact_match == 0.25
    assert RunResults().long_bin is None and RunResults().long_exact_match is None


def test_unknown_keys_and_missing_ones_survive_a_round_trip():
    value = {"bins": {"1:2": {"exact_match": 1.0}}, "success": True, "from_a_newer_crasp": [1]}
    results = RunResults.from_json(value)
    assert results.extra == {"from_a_newer_crasp": [1]} and results.epochs is None
    assert results.to_json() == value


@pytest.mark.parametrize("value, message", [
    ([], "must be a JSON object"),
    ({"bins": []}, "'bins' must map"),
    ({"bins": {"1:2": 0.5}}, "bin 1:2"),
])
def test_malformed_results_are_refused_by_name(value, message):
    with pytest.raises(ResultsFormatError, match=message) as refused:
        RunResults.from_json(value, "RUN/results.json")
    assert "RUN/results.json" in str(refused.value)
    assert isinstance(refused.value, CraspError) and isinstance(refused.value, ValueError)


def test_a_missing_file_is_a_crasp_error(tmp_path):
    with pytest.raises(CraspError, match="missing"):
        RunResults.read(tmp_path)


def test_the_trainer_records_the_fingerprint_of_its_code(trained):
    from crasp.util.code_fingerprint import code_fingerprint

    results = RunResults.read(trained[0])
    assert results.environment["code"] == code_fingerprint()
    assert len(code_fingerprint()) == 12 and code_fingerprint() == code_fingerprint()
