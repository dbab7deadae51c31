"""``crasp extract RUN``: a float run quantized, decompiled, and its fidelity measured.

The fidelity ``crasp extract --json`` reports is recomputed here from scratch: the program it
wrote, read back and run by the interpreter, against the float run's own decisions
(``crasp.models``), on the test bins rebuilt from the run's config, with the skewed and extreme
distributions of the language.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

import crasp
from crasp.cli import cli
from crasp.languages import build_task, get_language
from crasp.languages.datasets import parse_test_bin
from crasp.models import load_model
from crasp.train.loop import train
from crasp.train.presets import resolve_preset

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """A float L3 run at depth 1 of two residual dimensions (few states), 3 epochs."""
    place = tmp_path_factory.mktemp("extract") / "run"
    train(resolve_preset("default", language="L3", depth=1, d_model=2, n_heads=1, d_ff=8,
                         train_bin=(4, 12), test_bins=[(13, 20), (21, 30)], n_train=200,
                         n_test=40, epochs=3, device="cpu"), place, resume=False)
    return place


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_extract_reports_a_fidelity_the_test_recomputes(tiny_run, tmp_path):
    result = invoke("extract", tiny_run, "-o", tmp_path / "p.crasp", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    program = crasp.load_program(tmp_path / "p.crasp")
    run = load_model(tiny_run)
    config = run.executable.config["train_config"]
    language = get_language("L3")
    names = ["13:20", "21:30"] + [f"{b}@{d}" for b in ("13:20", "21:30")
                                  for d in ("extreme", "skewed")]
    assert sorted(report["fidelity"]) == sorted(names)
    task = build_task(language, train_bin=(4, 12), test_bins=[parse_test_bin(n) for n in names],
                      n_train=config["n_train"], n_test=config["n_test"],
                      val_fraction=config["val_fraction"], seed=config["seed"])
    for name, split in zip(names, task.tests):
        strings = [list(s) for s in split.strings]
        ours = crasp.evaluate(program, strings).output
        theirs = run.predict(strings).output
        real = np.arange(ours.shape[1])[None, :] < np.array([len(s) for s in strings])[:, None]
        agree = float((ours == theirs[:, :ours.shape[1]])[real].mean())
        reported = report["fidelity"][name]["float"]
        assert reported["positions"] == int(real.sum())
        assert reported["agree"] == pytest.approx(agree, abs=1e-12)
        assert report["fidelity"][name]["quantized"]["agree"] == 1.0  # exact decompilation
    depth = report["depth"]
    assert depth["program"] == crasp.depth_of(program) <= depth["nominal"] == 1
    assert depth["theory"] == 1
    precision = report["precision"]
    assert precision["chosen_by"] == "validation token accuracy"
    chosen = [c for c in precision["candidates"]
              if (c["total_bits"], c["frac_bits"]) == (precision["total_bits"],
                                                       precision["frac_bits"])]
    assert chosen and (chosen[0]["token_accuracy"]
                       >= precision["float_validation_token_accuracy"]
                       or chosen[0]["token_accuracy"] == max(
                           c["token_accuracy"] for c in precision["candidates"]))


def test_extract_over_the_vocabulary_only_keeps_every_fidelity(tiny_run, tmp_path):
    """The program is shrunk for the run's tokens: on the test bins (strings of them) it
    answers as the exact one, so every fidelity figure is the same, in no more definitions."""
    reports, programs = [], []
    for name, extra in (("exact.crasp", []), ("small.crasp", ["--vocabulary-only"])):
        result = invoke("extract", tiny_run, "-o", tmp_path / name, "--json", *extra)
        assert result.exit_code == 0, result.output
        reports.append(json.loads(result.output))
        programs.append(crasp.load_program(tmp_path / name))
    exact, small = reports
    assert small["fidelity"] == exact["fidelity"] and small["precision"] == exact["precision"]
    assert small["decompile"]["vocabulary_only"] and not exact["decompile"]["vocabulary_only"]
    assert len(programs[1].definitions) <= len(programs[0].definitions)
    assert crasp.depth_of(programs[1]) <= crasp.depth_of(programs[0])


def test_extract_refuses_a_full_state_budget_and_other_kinds(tiny_run, tmp_path):
    result = invoke("extract", tiny_run, "-o", tmp_path / "p.crasp", "--precision", "8.4",
                    "--max-states", "10")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "too many states" in result.output and "layer 1" in result.output
    # the person set the precision: no claim that validation chose it, and no validation
    # string read where layer 1 alone is refused
    assert "read at precision 8.4 (set by --precision): the model has too many states to " \
           "decompile: layer 1 would enumerate " in result.output
    assert "chosen by" not in result.output
    assert not (tmp_path / "p.crasp").exists()
    for bad in (["--precision", "8.9"], ["--precision", "x"]):
        refused = invoke("extract", tiny_run, "-o", tmp_path / "p.crasp", *bad)
        assert refused.exit_code == 2 and "Traceback" not in refused.output
    model = tmp_path / "l3.model"
    assert invoke("compile", crasp.example("L3_predict"), "-o", model).exit_code == 0
    refused = invoke("extract", model, "-o", tmp_path / "p.crasp")
    assert refused.exit_code == 2 and "crasp extract takes a trained run" in refused.output


def test_extract_shows_each_step_only_with_progress(tiny_run, tmp_path):
    """A run of the paper's size reads every string in the format's exact arithmetic (over 15
    minutes before the decompiler starts, measured on an L6 d3 run of d_model 256):
    --progress shows a bar per step, each with its own count, and the report is the same."""
    quiet = invoke("extract", tiny_run, "-o", tmp_path / "a.crasp", "--json")
    shown = invoke("extract", tiny_run, "-o", tmp_path / "b.crasp", "--json", "--progress")
    assert quiet.exit_code == shown.exit_code == 0, quiet.output + shown.output
    assert quiet.stderr == ""
    report = json.loads(shown.stdout)
    assert {**json.loads(quiet.stdout), "output": None} == {**report, "output": None}
    finals = {}
    for line in shown.stderr.replace("\r", "\n").splitlines():
        name, _, rest = line.partition(":")
        if rest:
            finals[name.strip()] = rest
    assert sorted(finals) == ["decompile", "effective depth", "fidelity", "precision"]
    validation = 200 * 20 // 100      # n_train 200, the default val_fraction 0.2
    tried = len(report["precision"]["candidates"])
    assert f"{(1 + tried) * validation}/{(1 + tried) * validation} " in finals["precision"]
    strings = sum(row["float"]["strings"] for row in report["fidelity"].values())
    assert f"{2 * strings}/{2 * strings} " in finals["fidelity"]
    work = report["decompile"]["work"]
    assert f"| {work}/250000 units of --max-states" in finals["decompile"]
    # the heads' means on both test bins of 40 strings, then the longest bin for each subset
    # of the one layer kept: none, then the layer (unless none already succeeds)
    read = 2 * 40 + (1 if report["depth"]["effective"] == 0 else 2) * 40
    assert f"{read}/{read} " in finals["effective depth"]


def test_extract_says_who_chose_the_precision(tiny_run, tmp_path, monkeypatch):
    """Validation chooses the precision unless --precision sets it; the report (text and
    JSON) says which, and the refusal of a chosen precision says how to set it."""
    from crasp.train import extract
    chosen = invoke("extract", tiny_run, "-o", tmp_path / "a.crasp")
    assert chosen.exit_code == 0, chosen.output
    assert "(chosen by validation token accuracy; the float model's is " in chosen.output
    given = invoke("extract", tiny_run, "-o", tmp_path / "b.crasp", "--precision", "6.2")
    assert given.exit_code == 0, given.output
    assert "precision    6.2 (set by --precision; the float model's validation token " \
           "accuracy is " in given.output
    report = json.loads(invoke("extract", tiny_run, "-o", tmp_path / "c.crasp", "--precision",
                               "6.2", "--json").output)
    assert report["precision"]["chosen_by"] == "--precision"
    refused = invoke("extract", tiny_run, "-o", tmp_path / "d.crasp", "--max-states", "10")
    assert refused.exit_code == 2
    assert "at every candidate precision" in refused.output   # before any is measured
    monkeypatch.setattr(extract, "_refuse_where_no_candidate_fits", lambda *arguments: None)
    refused = invoke("extract", tiny_run, "-o", tmp_path / "d.crasp", "--max-states", "10")
    assert refused.exit_code == 2   # as where a candidate fits layer 1 and a later one fails
    assert "(chosen by validation token accuracy, " in refused.output
    assert "; --precision sets it): the model has too many states" in refused.output


def test_a_model_too_large_at_every_candidate_is_refused_before_any_is_measured(
        tiny_run, tmp_path, monkeypatch):
    """Layer 1 alone past --max-states at every candidate precision: refused at once, each
    candidate's count named, without reading a validation string (on a run of the paper's
    size the choice takes minutes and could only end in this refusal)."""
    from crasp.train import extract

    def measured(*arguments, **keywords):
        raise AssertionError("a validation string was read")
    monkeypatch.setattr(extract, "choose_precision", measured)
    refused = invoke("extract", tiny_run, "-o", tmp_path / "p.crasp", "--max-states", "10")
    assert refused.exit_code == 2 and "Traceback" not in refused.output, refused.output
    assert "too many states to decompile at every candidate precision: layer 1 alone " \
           "exceeds --max-states 10 (found before any validation string" in refused.output
    for total_bits, frac_bits in extract.CANDIDATES:
        assert f"\n  {total_bits}.{frac_bits}: " in refused.output
    assert not (tmp_path / "p.crasp").exists()


def test_a_refusal_names_the_chosen_candidates_accuracy(tiny_run, tmp_path, monkeypatch):
    """Where no candidate reaches the float model's accuracy the best one is chosen, which
    need not be the last one tried: the refusal gives the chosen one's accuracy."""
    from crasp.train import extract

    rows = [{"total_bits": 4, "frac_bits": 1, "token_accuracy": 0.61, "exact_match": 0.0},
            {"total_bits": 5, "frac_bits": 2, "token_accuracy": 0.93, "exact_match": 0.0},
            {"total_bits": 6, "frac_bits": 2, "token_accuracy": 0.87, "exact_match": 0.0}]
    choice = extract.PrecisionChoice(5, 2, rows, 0.99)
    assert choice.token_accuracy == 0.93
    monkeypatch.setattr(extract, "choose_precision", lambda *args, **kwargs: choice)
    monkeypatch.setattr(extract, "_refuse_where_no_candidate_fits", lambda *arguments: None)
    refused = invoke("extract", tiny_run, "-o", tmp_path / "p.crasp", "--max-states", "10")
    assert refused.exit_code == 2
    assert "read at precision 5.2 (chosen by validation token accuracy, 0.9300; " \
           in refused.output
