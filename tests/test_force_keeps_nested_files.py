"""--force replaces crasp's own results whole, with every sub-result crasp writes inside them (a
--precision run's model/, a run's analysis/ and hessian/, a split search's trials/N/, a zoo's
models/NAME/), and refuses, untouched, once any directory inside holds a file or a folder
that a person put there. Found by a fuzz: ``zoo build --force`` deleted a person's file, and
``train --force`` refused to replace a --precision run (its model/ was not among what crasp
writes)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from crasp.cli import cli
from crasp.util.outputs import OutputError, TRAINING_RUN, claim
from test_faults_outputs import TRAIN_ARGS, leftovers, snapshot
from test_search_parts import sweep_args

TINY_ARGS = [*TRAIN_ARGS, "--d-model", "4", "--n-heads", "1", "--d-ff", "8"]


def invoke(arguments: list[str]):
    return CliRunner().invoke(cli, arguments)


def _zoo(place: Path) -> list[str]:
    return ["zoo", "build", "-o", str(place), "--programs", "L1"]


def _precision_run(place: Path) -> list[str]:
    return ["train", *TINY_ARGS, "--precision", "8.4", "-o", str(place)]


def _analysed_run(place: Path) -> list[str]:
    return ["train", *TINY_ARGS, "-o", str(place)]


# result -> (arguments writing it at PLACE, what else makes its sub-results)
RESULTS = {
    "zoo": (_zoo, []),
    "precision run": (_precision_run, []),
    "run with its analyses": (_analysed_run, [["analyze", "{place}", "--no-progress"],
                                              ["analyze", "{place}", "--hessian",
                                               "--no-progress"]]),
}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, Path]:
    """Each result once, with its sub-results; tests work on copies."""
    root = tmp_path_factory.mktemp("made")
    places = {}
    for name, (arguments, extras) in RESULTS.items():
        place = root / name.replace(" ", "-")
        for words in [arguments(place)] + extras:
            result = invoke([word.replace("{place}", str(place)) for word in words])
            assert result.exit_code == 0, result.output
        places[name] = place
    sweep = root / "sweep"
    result = invoke(sweep_args(sweep, "--split-trials", languages="L3"))
    assert result.exit_code == 0, result.output
    places["split search cell"] = sorted(sweep.glob("cells/*"))[0]
    return places


def copy_of(made: dict[str, Path], name: str, tmp_path: Path) -> Path:
    place = tmp_path / "out" / made[name].name
    shutil.copytree(made[name], place, symlinks=True)
    return place


def force(name: str, place: Path):
    """Replace ``place`` with --force: the command for a result, ``claim`` for a cell (no
    command rewrites a sweep's cell; it must still count as a training run crasp wrote)."""
    if name == "split search cell":
        try:
            claim(place, TRAINING_RUN, force=True)
        except OutputError as error:
            return 2, str(error)
        return 0, ""
    result = invoke(RESULTS[name][0](place) + ["--force"])
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def test_the_sub_results_are_there(made):
    assert (made["zoo"] / "models" / "L1" / "meta.json").is_file()
    assert (made["precision run"] / "model" / "config.json").is_file()
    assert (made["run with its analyses"] / "analysis" / ".crasp-analyze").is_file()
    assert (made["run with its analyses"] / "hessian" / ".crasp-analyze").is_file()
    assert (made["split search cell"] / "trials" / "0" / "results.json").is_file()
    assert (made["split search cell"] / "config.json").is_file()


@pytest.mark.parametrize("name", [*RESULTS, "split search cell"])
def test_force_replaces_a_result_with_its_sub_results(made, tmp_path, name):
    place = copy_of(made, name, tmp_path)
    status, output = force(name, place)
    assert status == 0, output
    assert leftovers(place.parent) == []


@pytest.mark.parametrize("added", ["file", "folder"])
@pytest.mark.parametrize("name", [*RESULTS, "split search cell"])
def test_what_a_person_added_anywhere_inside_is_never_deleted(made, tmp_path, name, added):
    """Every directory of the result, at every depth, in turn."""
    place = copy_of(made, name, tmp_path)
    directories = [place] + sorted(p for p in place.rglob("*") if p.is_dir())
    assert len(directories) > 1
    for directory in directories:
        mine = directory / ("notes.txt" if added == "file" else "mine")
        if added == "file":
            mine.write_text("keep me")
        else:
            mine.mkdir()
            (mine / "f").write_text("keep me")
        before = snapshot(place)
        status, output = force(name, place)
        assert status == 2, (directory, output)
        assert str(mine.relative_to(place)) in output, output
        assert snapshot(place) == before
        assert leftovers(place.parent) == []
        shutil.rmtree(mine) if added == "folder" else mine.unlink()
