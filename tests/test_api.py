"""The Python API reads inputs and bins as the command line does."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import crasp
import crasp.cli
from crasp.cli import cli
from crasp.languages import build_task

DYCK = crasp.load_program(crasp.example("dyck1"))
MULTI = crasp.parse_program('alphabet "if" "x"\nanswer = #"if" > #"x"')

dyck_text = st.lists(st.sampled_from("()"), max_size=12).flatmap(
    lambda chars: st.sampled_from(["".join(chars), " ".join(chars), "  ".join(chars) + " "]))
multi_text = st.lists(st.sampled_from(["if", "x"]), max_size=6).map(" ".join)


def cli_outputs(program_path: str, arguments: list[str]) -> list[dict]:
    result = CliRunner().invoke(cli, ["run", program_path, "--json", *arguments])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in result.output.splitlines()]


@given(st.lists(dyck_text, min_size=1, max_size=4))
def test_a_list_of_strings_is_read_as_crasp_run_reads_an_argument(texts):
    evaluation = crasp.evaluate(DYCK, texts)
    expected = [cli_outputs(str(crasp.example("dyck1")), [text])[0] for text in texts]
    assert [bool(a) for a in evaluation.accept] == [line["accept"] for line in expected]
    assert crasp.token_batch(texts, DYCK.alphabet) == [line["tokens"] for line in expected]


@given(dyck_text)
def test_one_string_is_one_input(text):
    assert len(crasp.evaluate(DYCK, text).accept) == 1
    assert crasp.evaluate(DYCK, text).accept[0] == crasp.evaluate(DYCK, [text]).accept[0]


@given(multi_text)
def test_a_multi_character_alphabet_splits_on_whitespace_only(text):
    tokens = text.split()
    batch = crasp.token_batch(text, MULTI.alphabet)
    assert batch == [tokens] if " " in text or not text else batch == [[text]]
    assert crasp.evaluate(MULTI, [tokens]).accept[0] == (tokens.count("if") > tokens.count("x"))


def test_token_lists_are_taken_as_given_and_mixtures_are_refused():
    assert crasp.token_batch([("(", ")"), [")"]], DYCK.alphabet) == [["(", ")"], [")"]]
    assert crasp.token_batch([], DYCK.alphabet) == []
    with pytest.raises(crasp.InputError, match="mixes"):
        crasp.evaluate(DYCK, ["()", [")"]])
    with pytest.raises(crasp.InputError, match="not in the alphabet"):
        crasp.evaluate(DYCK, "(a)", strict_alphabet=True)
    # By default a token outside the alphabet reads as in Hahn's interpreter: no token test holds.
    assert crasp.evaluate(DYCK, "(a)").trace["C_open"][0].tolist() == [1, 1, 1]


def test_the_compiled_model_reads_inputs_like_the_interpreter():
    from crasp.compiler import compile_program, execute

    model = compile_program(DYCK)
    texts = ["(())", "( ) )", "", ")("]
    assert execute(model, texts).accept.tolist() == crasp.evaluate(DYCK, texts).accept.tolist()
    assert execute(model, "(())").accept.tolist() == [True]


def test_bins_as_strings_or_pairs_give_the_same_task():
    as_strings = build_task("L3", "6:9", "10:12,13:15", n_train=30, n_test=8, seed=1)
    as_pairs = build_task("L3", (6, 9), [(10, 12), (13, 15)], n_train=30, n_test=8, seed=1)
    mixed = build_task("L3", "6:9", ["10:12", (13, 15)], n_train=30, n_test=8, seed=1)
    for task in (as_pairs, mixed):
        assert task.train.strings == as_strings.train.strings
        assert [s.strings for s in task.tests] == [s.strings for s in as_strings.tests]


def test_a_bad_bin_is_a_crasp_error():
    with pytest.raises(crasp.CraspError, match="bad bin"):
        build_task("L3", "9:6", "10:12", n_train=10, n_test=2)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    from crasp.train import train

    return train(language="L3", depth=1, train_bin="4:8", test_bins="9:16", n_train=64,
                 n_test=16, epochs=2, d_model=16, d_ff=32,
                 run_dir=tmp_path_factory.mktemp("run"))


def test_train_returns_the_model_config_vocabulary_and_metrics(tiny_run):
    from crasp.train import TrainResult, load_run
    from crasp.train.run import read_json

    assert isinstance(tiny_run, TrainResult)
    assert tiny_run.metrics == read_json(tiny_run.run_dir / "results.json")
    assert tiny_run.config.train_bin == (4, 8) and tiny_run.vocab == ("a", "b")
    assert tiny_run.exact_match("9:16") == tiny_run.exact_match((9, 16))
    loaded = load_run(tiny_run.run_dir)
    strings = ["aab", "abab", "a b b a"]
    assert loaded.predict(strings) == tiny_run.predict(strings)
    assert [len(p) for p in loaded.predict(strings)] == [3, 4, 4]


def test_predictions_are_the_models_exact_match_on_its_test_bin(tiny_run):
    """The exact match of results.json, recomputed from ``predict`` and the language's labels."""
    task = build_task("L3", "4:8", "9:16", n_train=64, n_test=16,
                      seed=tiny_run.config.data_seed if tiny_run.config.data_seed is not None
                      else tiny_run.config.seed)
    test = task.tests[0]
    predictions = tiny_run.predict([list(s) for s in test.strings])
    exact = sum(p == [bool(v) for v in labels] for p, labels in zip(predictions, test.labels))
    assert exact / len(test.strings) == pytest.approx(tiny_run.exact_match("9:16"))


def test_a_run_that_is_not_finished_is_refused(tmp_path):
    from crasp.train import load_run

    with pytest.raises(crasp.CraspError, match="no finished run"):
        load_run(tmp_path)


def test_load_sweep_without_pandas_says_how_to_get_it(tmp_path, monkeypatch):
    from crasp.train import load_sweep

    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(crasp.CraspError, match=r"crasp\[pandas\]"):
        load_sweep(tmp_path)


def test_version_and_module_entry_point():
    import importlib

    assert crasp.__version__.count(".") == 2
    assert importlib.import_module("crasp.__main__").main is crasp.cli.main


def test_load_sweep_reads_bins_drawn_from_a_test_distribution(tmp_path):
    """A cell scored on ``351:400@skewed`` (the second edition's bins) loads, with the
    distribution in its own column."""
    from test_report import write_cell

    from crasp.train import load_sweep
    from crasp.train.results import BinScore, RunResults

    identifier = write_cell(tmp_path, "L3", 1, 0, 1.0)
    results = RunResults.read(tmp_path / "cells" / identifier)
    skewed = {**results.bins, "351:400@skewed": BinScore(0.5, 0.9, 8)}
    RunResults(**{**results.__dict__, "bins": skewed}).write(tmp_path / "cells" / identifier)
    table = load_sweep(tmp_path)
    row = table[table["bin"] == "351:400@skewed"].iloc[0]
    assert (row["bin_lo"], row["bin_hi"], row["distribution"]) == (351, 400, "skewed")
    assert row["exact_match"] == 0.5
    assert set(table[table["bin"] != "351:400@skewed"]["distribution"]) == {"uniform"}
